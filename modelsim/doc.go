// Package modelsim is a scripted model server: it speaks the model APIs the
// coding-agent CLIs call (Anthropic Messages, OpenAI Responses, OpenAI Chat
// Completions and Gemini, streaming and not) and answers from a Scenario, a
// data file that says call by call what the model replies: text, thinking,
// tool calls, an HTTP error with its retry-after, a delay, and the usage it
// reports.
//
// A scenario names tools by role (the shell tool, the plan tool, the
// subagent tool, the file edit tool, ...). Each request says which tools the
// harness offers; the server resolves the role against them by name and JSON
// schema and writes the arguments in that tool's own shape, so one scenario
// runs on every harness. Requests that a harness makes beside its
// conversation (a title, a routing decision, a token count) get sensible
// answers without the scenario spelling them out.
//
// Usage in a scenario has agentstream's meaning (docs/format.md, "Usage"):
// input not read from cache, output including reasoning, cache reads, cache
// writes, reasoning. The server converts it to each API's fields, so a test
// compares what a harness reports with the scenario's numbers directly.
//
// Every request is recorded with what was answered, so a test can assert what
// the harness sent. Harnesses lists the environment and configuration files
// each harness needs to reach a server at a given address.
package modelsim
