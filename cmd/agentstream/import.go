package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/store"
)

const importDoc = `Stores a recorded native output file (one harness's stdout, - for stdin) as a
session: its lines are kept byte for byte (but for the secrets they hold,
masked unless --no-redact) and normalized with today's adapters. It prints
the session's id.

Importing is idempotent by content: the id is derived from the SHA-256 of
the file's bytes, so the same file imported again (under any name) gives
the session it gave the first time, which is not stored twice; a file that
has grown since is other content, and a session of its own. --id names the
session instead (and then nothing is looked up).

The session's times are its lines' own: it starts at the first event's time
and ends at the last's. Lines without times (some dialects carry none) are
dated by the file: the session ends at its modification time (now, for
stdin) and lasts the duration the harness reported, if it did.

An empty or binary file is refused (exit 1): it is no session.`

func cmdImport(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "import", "[--protocol P|auto] [--id ID] [--harness H] FILE|-\n       agentstream import --local [--since T] [--harness H] [--watch [--interval D]]", importDoc+"\n\n"+localDoc)
	db := dbFlag(fs)
	protocol := fs.String("protocol", "auto", "the dialect of the file: auto or "+protocolList())
	id := fs.String("id", "", "the session id (default: a new one)")
	harness := fs.String("harness", "", "the harness (default: the protocol's); with --local, take only this harness's files")
	local := fs.Bool("local", false, "find and import the harnesses' own session files under $HOME")
	since := fs.String("since", "", "with --local: skip files last modified before `T` (a date, an RFC 3339 time, or 36h, 7d back)")
	watch := fs.Bool("watch", false, "with --local: keep importing new and grown files until Ctrl-C")
	interval := fs.Duration("interval", 5*time.Second, "with --watch: how often to look")
	rf := redactFlag(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if *local {
		return cmdImportLocal(ctx, e, *db, pos, *protocol, *id, *harness, *since, *watch, *interval, rf)
	}
	if *since != "" || *watch {
		fmt.Fprintln(e.stderr, "agentstream import: --since and --watch go with --local")
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream import: one FILE expected")
		return exitUsage
	}
	if err := checkProtocol(*protocol, "auto"); err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitUsage
	}
	if *id != "" && !store.ValidID(*id) {
		fmt.Fprintf(e.stderr, "agentstream import: bad --id %q\n", *id)
		return exitUsage
	}
	st, _, err := openBulkStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	defer st.Close()
	red, err := rf.redactor(ctx, e, st)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	name := pos[0]
	f, mtime, err := seekableInput(ctx, e, name)
	if err != nil {
		return inputFailed(ctx, e, "import", err)
	}
	defer f.Close()
	o := importOptions{protocol: *protocol, id: *id, harness: *harness, mtime: mtime, redact: red}
	if fi, err := os.Stat(name); err == nil && name != "-" {
		o.progress = newProgress(e, "import "+name, fi.Size())
		defer o.progress.finish()
	}
	sid, existed, err := importSeekable(ctx, st, f, o)
	if err != nil {
		if name != "-" {
			err = fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintln(e.stderr, "agentstream import:", err)
		return exitError
	}
	if existed {
		fmt.Fprintf(e.stderr, "agentstream import: %s: already imported (the same content): nothing stored\n", name)
	}
	fmt.Fprintln(e.stdout, sid)
	return exitOK
}

// seekableInput opens name for reading twice, with its modification time;
// stdin ("-") is copied to a temporary file first, removed on Close, and
// dated now.
func seekableInput(ctx context.Context, e *env, name string) (io.ReadSeekCloser, time.Time, error) {
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, time.Time{}, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, time.Time{}, err
		}
		return f, fi.ModTime(), nil
	}
	f, err := os.CreateTemp(e.getenv("TMPDIR"), "agentstream-import-")
	if err != nil {
		return nil, time.Time{}, err
	}
	t := &tempFile{f}
	if _, err := io.Copy(f, e.stdinFor(ctx, "import")); err != nil {
		t.Close()
		return nil, time.Time{}, fmt.Errorf("stdin: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Close()
		return nil, time.Time{}, err
	}
	return t, time.Now(), nil
}

// tempFile is a file removed when closed.
type tempFile struct{ *os.File }

func (t *tempFile) Close() error {
	err := t.File.Close()
	if rerr := os.Remove(t.Name()); err == nil {
		err = rerr
	}
	return err
}

// importSeekable stores the native lines of r as a session, reading them
// up to three times: for the content id (unless o.id is set), for the
// times, then to store them. It returns the session's id, and existed true
// when a session of that content id was stored already (then nothing more
// is read, and nothing is written).
func importSeekable(ctx context.Context, st store.Store, r io.ReadSeeker, o importOptions) (id string, existed bool, err error) {
	rewind := func() error {
		_, err := r.Seek(0, io.SeekStart)
		return err
	}
	if o.id == "" {
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return "", false, err
		}
		if err := rewind(); err != nil {
			return "", false, err
		}
		var sum [sha256.Size]byte
		o.id = contentID([sha256.Size]byte(h.Sum(sum[:0])))
		if _, err := st.Session(ctx, o.id); err == nil {
			return o.id, true, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", false, err
		}
	}
	if ss, ok := st.(startSetter); ok {
		// The times are found as the lines are stored, and the start
		// set after: no reading of the lines beforehand.
		o.setStart = ss
	} else {
		pre, err := prescan(r, o.protocol)
		if err != nil {
			return "", false, err
		}
		if err := rewind(); err != nil {
			return "", false, err
		}
		o.start, o.end = pre.times(o.mtime)
	}
	id, err = importStream(ctx, st, r, o)
	return id, false, err
}

// startSetter is a store that can set a session's start time after
// creating it (sqlite.Store.SetStartedAt).
type startSetter interface {
	SetStartedAt(ctx context.Context, id string, t time.Time) error
}

// prescanned is what a first reading of an import learns.
type prescanned struct {
	first      time.Time // the first event's own time; zero if none
	durationMs *int64    // the duration the harness reported, read only when no event has a time
}

// times returns a session's start and end: the first event's own time
// and, for the end, zero (the last event's time, which importStream
// finds); else, with no time in the lines, the end at mtime and the start
// the reported duration before it.
func (p prescanned) times(mtime time.Time) (start, end time.Time) {
	if !p.first.IsZero() {
		return p.first, time.Time{}
	}
	var d time.Duration
	if p.durationMs != nil && *p.durationMs > 0 {
		d = time.Duration(*p.durationMs) * time.Millisecond
	}
	return mtime.Add(-d), mtime
}

// prescan reads r, normalizing its lines (as importStream will) up to the
// first event with a time of its own; lines with no time are read to the
// end, for the duration their harness reported.
func prescan(r io.Reader, protocol string) (prescanned, error) {
	var p prescanned
	br := bufio.NewReaderSize(r, adapter.DetectPeek)
	if err := checkText(br); err != nil {
		return p, err
	}
	if protocol == "" || protocol == "auto" {
		protocol = adapter.DetectReader(br)
	}
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return p, err
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	var folder agentstream.UsageFolder
	var envs []agentstream.Envelope
	take := func() {
		for i := range envs {
			if ts := envs[i].TS; !ts.IsZero() && p.first.IsZero() {
				p.first = ts
			}
			folder.AddEnvelope(&envs[i])
		}
	}
	lr := agentstream.NewLineReader(br)
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, err
		}
		envs = n.Line(envs[:0], l, time.Time{})
		take()
		if !p.first.IsZero() {
			return p, nil
		}
	}
	envs = n.End(envs[:0], time.Time{})
	take()
	p.durationMs = folder.Recap().DurationMs
	return p, nil
}

// contentID is the session id of an import's content: "s_" and 26 digits
// of Crockford's base32, as store.NewID's ids, here of the first 128 bits
// of the content's SHA-256.
func contentID(sum [sha256.Size]byte) string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	out := []byte("s_")
	// 130 bits: two zero bits, then the first 128 of the sum.
	for i := range 26 {
		v := 0
		for j := range 5 {
			v <<= 1
			if bit := i*5 + j - 2; bit >= 0 && sum[bit/8]&(0x80>>(bit%8)) != 0 {
				v |= 1
			}
		}
		out = append(out, alphabet[v])
	}
	return string(out)
}

type importOptions struct {
	protocol, id, harness string
	mtime                 time.Time
	// start and end, when set, are the session's times (see prescan);
	// otherwise the start is the first event's time, else mtime.
	start, end time.Time
	// redact, when not nil, masks the secrets of every line first.
	redact *redact.Redactor
	// labels are the session's labels.
	labels map[string]string
	// progress, when not nil, counts the bytes stored.
	progress *progress
	// setStart, when not nil, replaces the prescan: importStream finds
	// the times as prescan would and sets the start after the lines are
	// stored.
	setStart startSetter
}

// importBuffer is how many lines import reads before it creates the
// session, looking for a first event that carries its own time.
const importBuffer = 256

// importStream stores the native lines of r as a new session and returns
// its id.
func importStream(ctx context.Context, st store.Store, r io.Reader, o importOptions) (string, error) {
	r = o.progress.reader(r)
	if o.redact != nil {
		// The masking runs beside the normalization and the writes.
		ra := readAhead(o.redact.Reader(r))
		defer ra.Close()
		r = ra
	}
	br := bufio.NewReaderSize(r, adapter.DetectPeek)
	if err := checkText(br); err != nil {
		return "", err
	}
	protocol := o.protocol
	if protocol == "" || protocol == "auto" {
		protocol = adapter.DetectReader(br)
	}
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return "", err
	}
	harness := o.harness
	if harness == "" {
		harness = a.Harness
	}
	id := o.id
	if id == "" {
		id = store.NewID(o.mtime)
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: id, Harness: harness, ExplicitTurns: a.ExplicitTurns})
	var (
		w         store.Writer
		heldLines []store.Line
		heldEnvs  []agentstream.Envelope
		first     time.Time
		last      time.Time
		envs      []agentstream.Envelope
		folder    agentstream.UsageFolder
		created   time.Time // the start the session was created with
	)
	open := func() error {
		start := o.start
		if start.IsZero() {
			start = first
		}
		if start.IsZero() {
			start = o.mtime
		}
		created = start
		// w stays nil when Create fails: a failed Create's writer may be a
		// typed nil, which w != nil would not tell.
		created, err := st.Create(ctx, store.NewSession{ID: id, Protocol: a.Name, Harness: harness, StartedAt: start, Labels: o.labels})
		if err != nil {
			return err
		}
		w = created
		for _, l := range heldLines {
			if err := w.Line(ctx, l); err != nil {
				return err
			}
		}
		for _, env := range heldEnvs {
			if err := w.Handle(ctx, env); err != nil {
				return err
			}
		}
		heldLines, heldEnvs = nil, nil
		return nil
	}
	take := func(l store.Line) error {
		al := store.AgentLine(l)
		if l.Stream == store.Stdout {
			envs = n.Line(envs[:0], al, time.Time{})
		} else {
			envs = n.Stderr(envs[:0], al, time.Time{})
		}
		for i := range envs {
			if ts := envs[i].TS; !ts.IsZero() {
				if first.IsZero() {
					first = ts
				}
				last = ts
			}
			if o.setStart != nil && first.IsZero() {
				folder.AddEnvelope(&envs[i])
			}
		}
		if w == nil {
			l.Data = append([]byte(nil), l.Data...)
			heldLines = append(heldLines, l)
			heldEnvs = append(heldEnvs, envs...)
			envs = nil
			if !first.IsZero() || len(heldLines) >= importBuffer {
				return open()
			}
			return nil
		}
		if err := w.Line(ctx, l); err != nil {
			return err
		}
		for _, env := range envs {
			if err := w.Handle(ctx, env); err != nil {
				return err
			}
		}
		return nil
	}
	sp := &store.LineSplitter{Stream: store.Stdout, Fn: take}
	if _, err := io.Copy(sp, br); err != nil {
		if w != nil {
			w.Close(context.WithoutCancel(ctx))
		}
		return "", err
	}
	if err := sp.Close(); err != nil {
		if w != nil {
			w.Close(context.WithoutCancel(ctx))
		}
		return "", err
	}
	if w == nil {
		if err := open(); err != nil {
			return "", err
		}
	}
	for _, env := range n.End(nil, time.Time{}) {
		if o.setStart != nil && first.IsZero() {
			folder.AddEnvelope(&env)
		}
		if err := w.Handle(ctx, env); err != nil {
			w.Close(context.WithoutCancel(ctx))
			return "", err
		}
	}
	end := o.end
	if o.setStart != nil {
		// What prescan would have found: the first event's own time,
		// else the end at mtime and the start the reported duration
		// before it.
		o.start, end = prescanned{first: first, durationMs: folder.Recap().DurationMs}.times(o.mtime)
	}
	if end.IsZero() {
		end = last
	}
	if end.IsZero() {
		end = o.mtime
	}
	if err := closeAt(ctx, w, end); err != nil {
		return "", err
	}
	if o.setStart != nil && !o.start.Equal(created) {
		if err := o.setStart.SetStartedAt(ctx, id, o.start); err != nil {
			return "", err
		}
	}
	return id, nil
}

// readAhead returns a reader of src's bytes that a goroutine of its own
// reads from src ahead of it, up to four chunks of 256 KiB, so that what
// src does (masking secrets) runs beside what its reader does. Close stops
// the goroutine; it must be called.
func readAhead(src io.Reader) io.ReadCloser {
	ra := &aheadReader{chunks: make(chan aheadChunk, 4), free: make(chan []byte, 6), stop: make(chan struct{})}
	go func() {
		defer close(ra.chunks)
		for {
			var buf []byte
			select {
			case buf = <-ra.free:
			default:
				buf = make([]byte, aheadChunkSize)
			}
			n, err := io.ReadFull(src, buf)
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			select {
			case ra.chunks <- aheadChunk{buf[:n], err}:
			case <-ra.stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ra
}

const aheadChunkSize = 256 << 10

type aheadChunk struct {
	b   []byte
	err error
}

// aheadReader is readAhead's reader. It is not safe for concurrent use.
type aheadReader struct {
	chunks chan aheadChunk
	free   chan []byte // chunks read, for the goroutine to fill again
	stop   chan struct{}
	cur    aheadChunk
	off    int
	closed bool
}

func (r *aheadReader) Read(p []byte) (int, error) {
	for r.off == len(r.cur.b) {
		if r.cur.err != nil {
			return 0, r.cur.err
		}
		if r.cur.b != nil {
			select {
			case r.free <- r.cur.b[:cap(r.cur.b)]:
			default:
			}
		}
		c, ok := <-r.chunks
		if !ok {
			return 0, io.EOF
		}
		r.cur, r.off = c, 0
	}
	n := copy(p, r.cur.b[r.off:])
	r.off += n
	return n, nil
}

// Close stops the goroutine reading ahead.
func (r *aheadReader) Close() error {
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	return nil
}
