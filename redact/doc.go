// Package redact masks secrets in native lines as they enter agentstream,
// before anything stores, sends or renders them. It is the fast scan that
// every line goes through; the deeper scan that exports and share links run
// is package redact/gitleaks.
//
// # What is masked
//
// A [Redactor] finds, in each line:
//
//   - known key and token shapes: AWS access key ids, Google API keys,
//     GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Hugging Face, npm,
//     PyPI, DigitalOcean and Shopify tokens, JSON Web Tokens, and the body of
//     PEM private keys;
//   - the value of a sensitive name (password, secret, token, API key,
//     private key, credentials, authorization, …) written NAME=value,
//     NAME: value, "name": "value" (as it appears inside a harness's JSON
//     line, escaped or not) or 'name': 'value';
//   - the password of a URL (scheme://user:password@host);
//   - what the rules add (see [ParseRules]).
//
// Placeholders are left alone: empty values, ${VAR}, $VAR, <angle>,
// {{template}}, values of one repeated character, null, true, false and
// their kin, values with "example" or starting with "your". For a name in
// lower or mixed case (code rather than an environment file), an unquoted
// value is masked only when it looks like a secret: eight bytes or more
// mixing letters and digits, not followed by a call or a member access.
//
// # The mask
//
// A secret is replaced by as many bytes as it had, so that sizes and
// offsets stay true: a line keeps its length, and a JSON line stays valid
// JSON (escape sequences inside a secret are kept as they are, and a mask
// never crosses a string's closing quote). A known shape keeps its public
// prefix (ghp_, sk-ant-, AKIA, …) so that a reader sees what it was.
// The rest becomes '*', and when ten bytes or more are masked it starts
// with a tag: '*', the first eight hex digits of HMAC-SHA256(key, secret),
// '*'. The secret hashed is the whole match, prefix included, with JSON
// escapes decoded in a JSON line. The same secret under the same key gets
// the same tag wherever it appears (native lines and the events made of
// them, every session of a store), so that repeats can be matched without
// revealing the secret; without the key, a tag says nothing of it.
//
// A store keeps its own key (store keys, named "redact"), so tags compare
// within a store. Masking is idempotent: a masked line scans as it is.
//
// # Speed
//
// The scan is hand-written: runs of token bytes are probed every sixteen
// bytes and looked at only when long enough to be a key; separators ('=',
// ':', '@') and PEM headers are found with the standard library's
// vectorized byte search, and a name is checked only by its last words. A
// line with nothing to mask is not written to. Rules with regular
// expressions run Go's regexp on each line that holds their literal
// prefix (every line when a rule has none): they cost what regexp costs.
package redact
