package driver

import "github.com/agentstream/agentstream/internal/jsonscan"

// rpcMessage is the top level of one JSON-RPC message, as raw JSON values.
type rpcMessage struct {
	id, method, result, err, params []byte
}

// parseRPC reads the top level of a JSON-RPC message line; false when the
// line is not a JSON object.
func parseRPC(line []byte) (rpcMessage, bool) {
	var m rpcMessage
	o, ok := jsonscan.Object(line)
	if !ok {
		return m, false
	}
	for o.Next() {
		switch {
		case o.KeyIs("id"):
			m.id = o.Value()
		case o.KeyIs("method"):
			m.method = o.Value()
		case o.KeyIs("result"):
			m.result = o.Value()
		case o.KeyIs("error"):
			m.err = o.Value()
		case o.KeyIs("params"):
			m.params = o.Value()
		}
	}
	return m, o.Err() == nil
}
