// Package lab runs the real coding-agent CLIs against the model simulator
// (package modelsim): every scenario on every harness, through agentstream
// run, each with a fresh HOME and working directory, and checks the events
// against what the simulator sent.
//
// Its tests need the harness CLIs installed (scripts/lab does it) and find
// them through AGENTSTREAM_LAB, the directory holding their node_modules;
// without it they skip. Flags of the tests:
//
//	-lab.update           write each run's stdout as a fixture of its adapter
//	-lab.harness REGEXP   run only the harnesses whose name matches
//	-lab.scenario REGEXP  run only the scenarios whose name matches
//	-lab.report FILE      write the results as JSON (the drift report reads it)
package lab
