package runner

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// child is the running harness as a session sees it. The real one is a
// process; tests give a session a fake.
type child struct {
	pid int
	// stdout and stderr are the read ends of the harness's output. Closing
	// one makes a blocked Read return, which is how a session stops reading
	// output that a process outside its control keeps open.
	stdout, stderr io.ReadCloser
	// stdin is the write end of the harness's stdin, or nil when the
	// harness reads /dev/null.
	stdin io.WriteCloser
	// exited delivers the harness's exit status once.
	exited <-chan exitStatus
	// signal sends sig to the harness's whole process group.
	signal func(sig syscall.Signal)
	// alive reports whether a process of the group is still running.
	alive func() bool
	// reap, when set, waits for the processes of the tree that ended as
	// this process's children; it is called once the tree is stopped.
	reap func()
}

// Child is a started harness as the runner supervises it, for
// Runner.Start: its output, its stdin, its exit, and how to signal its
// process group.
type Child struct {
	// PID is the process id, which is also its process group id; 0 for
	// a harness that is no process.
	PID int
	// Stdout and Stderr are the read ends of its output. Closing one must
	// make a blocked Read return.
	Stdout, Stderr io.ReadCloser
	// Stdin is the write end of its stdin, or nil when it has none.
	Stdin io.WriteCloser
	// Exited delivers how it ended, once (or is closed).
	Exited <-chan ExitStatus
	// Signal sends sig to its whole process group.
	Signal func(sig syscall.Signal)
	// Alive reports whether a process of its group still runs.
	Alive func() bool
}

// ExitStatus is how a harness process ended.
type ExitStatus struct {
	// Code is the exit status, or -1 when a signal ended it.
	Code int
	// Signal is the signal that ended it, or 0.
	Signal syscall.Signal
}

// fromChild makes the runner's child of c. The goroutine it starts returns
// once c.Exited delivered or closed.
func fromChild(c *Child) *child {
	exited := make(chan exitStatus, 1)
	go func() {
		if st, ok := <-c.Exited; ok {
			exited <- exitStatus{code: st.Code, sig: st.Signal}
		}
	}()
	return &child{pid: c.PID, stdout: c.Stdout, stderr: c.Stderr, stdin: c.Stdin, exited: exited, signal: c.Signal, alive: c.Alive}
}

// exitStatus is how the harness process ended.
type exitStatus struct {
	code int            // exit status, -1 when signalled
	sig  syscall.Signal // the signal that ended it, or 0
}

// MarkVar is the environment variable the runner adds to a harness's
// environment, with a value of its own for each run, so that it finds the
// harness's descendants that left its process group (on Linux).
const MarkVar = "AGENTSTREAM_RUN"

// startChild starts the harness in a process group of its own, with pipes
// for stdout and stderr and, when withStdin, for stdin. Its environment
// gets the run's mark (MarkVar), and this process becomes a child
// subreaper where it can, so that the whole tree can be stopped.
func startChild(args []string, dir string, env []string, withStdin bool) (*child, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if env == nil {
		env = os.Environ()
	}
	var id [12]byte
	rand.Read(id[:])
	mark := MarkVar + "=" + hex.EncodeToString(id[:])
	cmd.Env = append(env[:len(env):len(env)], mark)
	setProcessGroup(cmd)
	becomeSubreaper()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	closeAll := []*os.File{outR, outW, errR, errW}
	var inR, inW *os.File
	if withStdin {
		if inR, inW, err = os.Pipe(); err != nil {
			closeFiles(closeAll...)
			return nil, err
		}
		closeAll = append(closeAll, inR, inW)
		cmd.Stdin = inR
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		closeFiles(closeAll...)
		return nil, err
	}
	// The harness holds its ends now; ours would keep the pipes open.
	closeFiles(outW, errW, inR)
	pid := cmd.Process.Pid
	exited := make(chan exitStatus, 1)
	// The waiter goroutine returns when the harness process exits.
	go func() {
		err := cmd.Wait()
		exited <- statusOf(cmd.ProcessState, err)
	}()
	t := &tree{pid: pid, mark: []byte(mark)}
	c := &child{
		pid:    pid,
		stdout: outR,
		stderr: errR,
		exited: exited,
		signal: t.signal,
		alive:  t.alive,
		reap:   t.reap,
	}
	if inW != nil {
		c.stdin = inW
	}
	return c, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func statusOf(ps *os.ProcessState, err error) exitStatus {
	if ps == nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ps = ee.ProcessState
		}
	}
	if ps == nil {
		return exitStatus{code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitStatus{code: -1, sig: ws.Signal()}
	}
	return exitStatus{code: ps.ExitCode()}
}
