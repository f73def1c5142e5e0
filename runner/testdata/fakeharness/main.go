// Command fakeharness plays a harness for the runner's tests: a real child
// process that replays recorded output with timing, or misbehaves in one
// of the ways a real harness can.
//
//	fakeharness replay [-delay D] [-stdin] [-stream-stdin] [-stderr FILE] [-exit N] [-hang] FILE
//	fakeharness silent FILE          print FILE, then nothing, forever
//	fakeharness forever              print a line every 20ms, forever
//	fakeharness grandchild PIDFILE [-exit]
//	                                 start a grandchild, write both pids, wait
//	                                 forever (or exit at once, leaving the
//	                                 grandchild holding stdout)
//	fakeharness sleep                wait forever
//	fakeharness ignoreterm           ignore SIGTERM, print a line, wait forever
//	fakeharness flood N              N lines on stderr, then a result line
//	fakeharness bigline BYTES        a line of BYTES bytes between an init and a result line
//	fakeharness args                 print the arguments and stdin on stderr, as JSON
//	fakeharness acp LOGFILE          an Agent Client Protocol agent
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fatal("usage: fakeharness MODE ...")
	}
	mode, args := os.Args[1], os.Args[2:]
	switch mode {
	case "replay":
		replay(args)
	case "silent":
		copyFile(args[0], 0)
		forever()
	case "forever":
		for i := 0; ; i++ {
			fmt.Printf("{\"type\":\"tick\",\"n\":%d}\n", i)
			time.Sleep(20 * time.Millisecond)
		}
	case "grandchild":
		grandchild(args)
	case "sleep":
		forever()
	case "ignoreterm":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(`{"type":"tick"}`)
		forever()
	case "flood":
		n, _ := strconv.Atoi(args[0])
		w := bufio.NewWriter(os.Stderr)
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "stderr line %d\n", i)
		}
		w.Flush()
		fmt.Println(resultLine)
	case "bigline":
		bigline(args)
	case "args":
		in, _ := io.ReadAll(os.Stdin)
		b, _ := json.Marshal(map[string]any{"args": os.Args[2:], "stdin": string(in)})
		fmt.Fprintln(os.Stderr, string(b))
	case "acp":
		acp(args[0])
	default:
		fatal("unknown mode " + mode)
	}
}

const (
	initLine   = `{"type":"system","subtype":"init","session_id":"fake-session","model":"claude-sonnet-4-5","cwd":"/tmp/fake","claude_code_version":"0.0.1"}`
	resultLine = `{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1,"duration_ms":10,"session_id":"fake-session"}`
)

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "fakeharness:", msg)
	os.Exit(2)
}

func forever() {
	for {
		time.Sleep(time.Hour)
	}
}

func replay(args []string) {
	fs := flag.NewFlagSet("replay", flag.ExitOnError)
	delay := fs.Duration("delay", 0, "pause before each line")
	stdin := fs.Bool("stdin", false, "read stdin to its end first and echo it on stderr")
	streamStdin := fs.Bool("stream-stdin", false, "read one stdin line first, echo it on stderr, and wait for stdin to close at the end")
	exit := fs.Int("exit", 0, "exit status")
	hang := fs.Bool("hang", false, "wait forever at the end")
	stderr := fs.String("stderr", "", "copy this file to stderr first")
	fs.Parse(args)
	if *stderr != "" {
		b, err := os.ReadFile(*stderr)
		if err != nil {
			fatal(err.Error())
		}
		os.Stderr.Write(b)
	}
	in := bufio.NewReader(os.Stdin)
	switch {
	case *stdin:
		b, _ := io.ReadAll(in)
		fmt.Fprintf(os.Stderr, "prompt: %s\n", b)
	case *streamStdin:
		line, _ := in.ReadString('\n')
		fmt.Fprintf(os.Stderr, "stdin: %s", line)
	}
	copyFile(fs.Arg(0), *delay)
	if *streamStdin {
		io.Copy(io.Discard, in)
	}
	if *hang {
		forever()
	}
	os.Exit(*exit)
}

func copyFile(name string, delay time.Duration) {
	f, err := os.Open(name)
	if err != nil {
		fatal(err.Error())
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if delay > 0 {
			time.Sleep(delay)
		}
		os.Stdout.Write(append(sc.Bytes(), '\n'))
	}
}

func grandchild(args []string) {
	cmd := exec.Command(os.Args[0], "sleep")
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fatal(err.Error())
	}
	pids := fmt.Sprintf("%d %d\n", os.Getpid(), cmd.Process.Pid)
	if err := os.WriteFile(args[0], []byte(pids), 0o644); err != nil {
		fatal(err.Error())
	}
	fmt.Println(initLine)
	if len(args) > 1 && args[1] == "-exit" {
		os.Exit(0)
	}
	forever()
}

func bigline(args []string) {
	n, _ := strconv.Atoi(args[0])
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	fmt.Fprintln(w, initLine)
	head := `{"type":"assistant","message":{"content":[{"type":"text","text":"`
	tail := `"}]}}`
	w.WriteString(head)
	chunk := []byte(strings.Repeat("x", 64<<10))
	for left := n - len(head) - len(tail); left > 0; {
		k := min(left, len(chunk))
		w.Write(chunk[:k])
		left -= k
	}
	w.WriteString(tail + "\n")
	fmt.Fprintln(w, resultLine)
	w.Flush()
}

// acp plays an ACP agent: it answers initialize, session/new and
// session/prompt, streams a few session/update notifications, asks for
// permission once and waits for the answer. Every message it receives is
// appended to the log file, one per line. It exits when stdin closes.
func acp(logName string) {
	logf, err := os.Create(logName)
	if err != nil {
		fatal(err.Error())
	}
	defer logf.Close()
	out := json.NewEncoder(os.Stdout)
	send := func(v any) { out.Encode(v) }
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	var promptID any
	for in.Scan() {
		logf.Write(append(in.Bytes(), '\n'))
		var msg struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			continue
		}
		switch msg.Method {
		case "initialize":
			// Real agents refuse a client that does not say its version.
			var p struct {
				ClientInfo struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"clientInfo"`
			}
			json.Unmarshal(msg.Params, &p)
			if p.ClientInfo.Name == "" || p.ClientInfo.Version == "" {
				send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32603, "message": "Internal error"}})
				continue
			}
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{
				"protocolVersion": 1, "agentCapabilities": map[string]any{}, "agentInfo": map[string]any{"name": "fake-agent", "version": "1.0"},
			}})
		case "session/new":
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"sessionId": "sess-1"}})
		case "session/prompt":
			promptID = msg.ID
			update := func(u map[string]any) {
				send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "sess-1", "update": u}})
			}
			update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "Hello"}})
			update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Write file", "kind": "edit", "status": "pending"})
			send(map[string]any{"jsonrpc": "2.0", "id": "perm-1", "method": "session/request_permission", "params": map[string]any{
				"sessionId": "sess-1",
				"toolCall":  map[string]any{"toolCallId": "call-1"},
				"options": []map[string]any{
					{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
					{"optionId": "always", "name": "Always allow", "kind": "allow_always"},
					{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
				},
			}})
			send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "fs/read_text_file", "params": map[string]any{"sessionId": "sess-1", "path": "/etc/passwd"}})
		default:
			if msg.ID == "perm-1" && len(msg.Result) > 0 {
				send(map[string]any{"jsonrpc": "2.0", "id": promptID, "result": map[string]any{"stopReason": "end_turn"}})
			}
		}
	}
}
