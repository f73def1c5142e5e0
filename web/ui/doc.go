// Package ui is the web timeline of agentstream: a small single-page
// application, written as plain HTML, CSS and JavaScript with no build step,
// embedded in the binary and served by [Handler] next to the JSON API.
//
// The pages read everything through the API (package web): the sessions list
// from /api/sessions and the live /api/events/stream, a session from
// /api/sessions/{id}, its events page by page from /api/sessions/{id}/events
// and its live tail from /api/sessions/{id}/stream, the usage page from
// /api/usage. Charts are SVG built element by element (svg in common.js). The server-side part is
// therefore only a file server with fixed routes and strict headers.
//
// # Untrusted text
//
// Everything a harness printed is untrusted. The scripts build the DOM with
// createElement and textContent only; they never parse agent text as HTML and
// put it into no attribute but data-* and title (never href or src). Message
// text goes through a small Markdown subset implemented in static/markdown.js;
// links are shown as their text followed by the URL as plain text, never as
// clickable anchors, and images as "[image: alt]" and their URL, so the
// timeline never loads anything an agent named. The Content-Security-Policy
// that [Handler] sets forbids inline scripts and styles, so a mistake there
// fails closed, and a test in this package fails if a script uses innerHTML,
// outerHTML, insertAdjacentHTML, document.write or eval.
//
// # Live streams
//
// The pages read the server-sent-event endpoints with fetch and a small
// text/event-stream parser (static/common.js) rather than EventSource: the
// event names are the open-ended event types, which EventSource only delivers
// to listeners registered by name, and fetch can send the Authorization
// header, so the token never appears in a URL. A stream is resumed with
// ?after=SEQ after a disconnect, a gap or an "event: resync", and closed on
// "event: end".
//
// # DOM hooks for browser tests
//
// Sessions list (/): table#sessions with one tr.session[data-id][data-status]
// per session (data-reason when ended), its link a.session-link; filters
// select#filter-status and select#filter-harness, input#search (debounced,
// sent as q); button#load-more (hidden when there is no next page); #error
// shows API errors (#token-form when a token is needed).
//
// Session page (/sessions/{id}): #title, #status (span.status-<status>,
// data-status, data-reason), #harness, #model, #cwd; #recap with #recap-input,
// #recap-output, #recap-cache, #recap-cost (its item #recap-cost-item hidden
// unless the cost was reported), #recap-turns, #recap-calls (model calls),
// #recap-models (hidden for one model), #recap-duration, and the recap's
// figures as data-input, data-output, data-cache-read, data-cache-write,
// data-cost, data-turns, data-model-calls, data-runs, data-tokens-from,
// data-estimated and data-missing ("" for a figure nobody reported);
// #context (data-tokens, data-window) with #context-fill and #context-text,
// and #context-chart (data-points, data-peak, data-window), the context over
// the session's time as an SVG line; a usage event's element has its
// payload's figures as data-scope, data-run, data-input, data-output,
// data-cache-read, data-cache-write, data-cost and data-estimate; checkbox
// #show-raw; #timeline, the scrolling element, whose direct children between
// #timeline-start and #timeline-end are the top-level events, followed by
// #live-area. The timeline keeps at most 1,000 stored events (MAX_ROWS in
// session.js): a page loaded at one edge drops out-of-view events at the
// other, and #page-status says which events are on the page. Every stored
// event is .event[data-seq][data-type][data-turn] with id "e<seq>"; nested
// ones (subagent events, tool results) also have .nested or sit inside their
// call. A tool call is .event.tool (.running
// until its result, .done, .error, .denied; data-category), expanded by its
// button .tool-toggle (the element gets .expanded) to show pre.tool-input and,
// inside the result element .tool-result, pre.tool-output and
// .truncated-note. Subagent events are in details.children of their call.
// Streaming deltas are .streaming elements (no .event) in #live-area. Raw
// events are hidden unless #show-raw is checked. A deep-linked or
// keyboard-focused event has .highlight and the focus; button.source-btn on an
// event shows its native line in pre.source-line (it and the a.seq-link show
// on hover or focus of their row).
//
// Reading aids: a turn.started is .turn-start with span.turn-prompt (the
// first line of the turn's user message, which gets .prompt); a turn.ended is
// .turn-foot[data-foot-turn] whose .turn-figures and data-input, data-output,
// data-cache-read, data-cache-write, data-cost, data-calls and data-duration-ms
// are the turn's usage (summarizeTurns; "" for a figure nobody reported).
// Usage rows are hidden unless checkbox #show-usage is checked. A file.change
// draws each diff as pre.diff-unified (span.d-line .d-add/.d-del/.d-hunk/
// .d-ctx/.d-meta) or, after its button.split-btn, table.diff-split (td.d-del
// on the left, td.d-add on the right); the code in them, coloured by the
// file's extension (the .change box has data-lang), is Text nodes and
// span.tk-kw, .tk-str, .tk-com, .tk-num, .tk-lit, .tk-key, .tk-var, .tk-tag
// and .tk-attr (static/highlight.js), as is a message's pre.md-code whose
// code element has data-lang. button.copy-btn copies a message, a
// tool input (the command of a shell call), an output or a diff, and has
// data-copied="true" once it did. A clipped text's .truncated-note has
// button.full-btn, which fetches the native line; the note then has .full,
// data-chars (code points shown) and data-from ("json", or "line" when the
// whole line is shown). Runs of plumbing events (hook, session.updated,
// session.state, session.title, message.accepted/started/completed,
// message.status, account) sit in details.fold[data-count] as direct
// children of #timeline, raw events joining the fold they follow
// (data-raw). An unknown session replaces the page with main#not-found and
// its a.back-link; an unknown path is static/notfound.html, with status 404.
//
// Usage page (/usage?period=N|all&by=K): select#usage-period and
// select#usage-by; #usage (aria-busy while loading); #usage-tiles with
// .tile[data-figure][data-value]; the charts figure#chart-tokens-day,
// #chart-cost-day (one g.bar per day, data-day, data-empty on a day without
// sessions), #chart-tokens-model and #chart-cost-model (one g.bar per model,
// data-model), each with data-bars, their bars carrying the API row's
// figures as data-key, data-sessions, data-input, data-output,
// data-cache-read, data-cache-write, data-cost and data-unpriced, and
// rect.seg[data-segment][data-value]; a cost nobody reported is a
// .unpriced-mark, never a bar. The table #usage-table has one tr per row in
// #usage-body and the total in #usage-foot, with the same data attributes.
package ui
