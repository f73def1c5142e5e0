// Package console renders a session's events for people: live in a
// terminal, in a CI log, or replayed from a recording. The renderer is an
// agentstream.Handler and reads only the event vocabulary, so it works for
// every harness.
//
// It shows a header (harness, version, model, working directory, session
// id); thinking, dim and italic; the assistant's text as it streams; one
// line per tool call with an icon, the tool's name and the adapter's safe
// summary (never the arguments of a tool the adapter does not know), then
// ✓ or ✗ with the output's size and the call's duration; subagent work
// indented under the call that started it; plans as checklists when they
// change; token figures each time the total passes another 5,000;
// retries, quota and warnings in yellow, errors in red; and at the end of
// the session a recap of its status, reason, turns, duration, tokens, cost
// (only when the harness reported one) and context.
//
// With CI set to "github" it writes GitHub Actions workflow commands: a
// ::group:: per turn, ::error:: for errors and ::warning:: for retries and
// quota, and on Close a Markdown recap for the step summary. Whatever the
// mode, all text that comes from the agent goes through the rules of
// Sanitize, so an agent can neither send escape sequences to the terminal
// nor issue workflow commands of its own.
package console
