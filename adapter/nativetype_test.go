package adapter_test

import (
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

func TestNativeType(t *testing.T) {
	tests := []struct{ line, want string }{
		{`{"type":"system","subtype":"status","status":"requesting"}`, "system/status"},
		{`{"type":"stream_event","event":{"type":"message_delta","usage":{}}}`, "stream_event/message_delta"},
		{`{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool"}}`, "control_request/can_use_tool"},
		{`{"type":"control_response","response":{"subtype":"success"}}`, "control_response"},
		{`{"type":"stream_event","event":{}}`, "stream_event"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{}}`, "session/update"},
		{`{"id":"0","msg":{"type":"agent_message"}}`, "msg/agent_message"},
		{`{"role":"assistant"}`, "(no type)"},
		{`not json`, "(not json)"},
		{`  `, "(blank)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := adapter.NativeType(agentstream.Line{N: 1, Bytes: []byte(tt.line)}); got != tt.want {
				t.Errorf("NativeType(%s) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}
