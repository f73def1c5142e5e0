package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentstream/agentstream/store"
)

// A Spool is the local file a remote session's native lines are written to
// before they are sent, so that none is lost while the server is away or
// when the runner dies, and none is held in memory: an Uploader sends
// them from the file, by byte cursor.
//
// The file is JSON lines, appended to and never rewritten: a header
// {"spool":1,"server":URL,"session":CreateRequest} (the request that
// creates the session, with its id), then one {"line":LineIn} per native
// line of stdout or stderr, in the order read, and {"end":End} when the
// run ended. Beside it, FILE.cursor holds the byte offset up to which the
// server acknowledged the records (a decimal number, replaced whole). A
// spool is finished when the server acknowledged its end; the Uploader
// then removes both files. A process that writes or uploads a spool holds
// an exclusive lock on it (flock, where the system has it), so that an
// unfinished spool nobody holds is one a crash left.
//
// A record is appended with one write, so a killed process leaves at most
// a torn last record, which OpenSpool cuts off. The records survive the
// process, not the machine: the file is synced only at the end.
//
// A Spool is safe for concurrent use: a runner writes stdout lines from
// one goroutine and stderr lines from another.
type Spool struct {
	path   string
	header SpoolHeader
	f      *os.File

	mu     sync.Mutex
	buf    []byte
	size   int64 // bytes written to the file
	last   map[string]int64
	ended  bool
	err    error
	notify chan struct{} // kicked when records were written
}

// SpoolHeader is the first record of a spool.
type SpoolHeader struct {
	// Version is 1.
	Version int `json:"spool"`
	// Server is the base URL of the server the lines go to.
	Server string `json:"server"`
	// NATS, when set, is the NATS servers (a comma-separated list) the
	// lines are published to instead (package natsbus).
	NATS string `json:"nats,omitempty"`
	// Session creates the session; its ID is set.
	Session CreateRequest `json:"session"`
}

// spoolRecord is one line of a spool after the header.
type spoolRecord struct {
	Line *LineIn `json:"line,omitempty"`
	End  *End    `json:"end,omitempty"`
}

// ErrSpoolBusy is returned by OpenSpool when another process holds the
// spool.
var ErrSpoolBusy = errors.New("api: spool is held by another process")

// CreateSpool creates the spool file path, which must not exist, with its
// header, and locks it.
func CreateSpool(path string, h SpoolHeader) (*Spool, error) {
	if h.Session.ID == "" || !store.ValidID(h.Session.ID) {
		return nil, fmt.Errorf("api: spool: bad session id %q", h.Session.ID)
	}
	h.Version = 1
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("api: spool: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	b, err := json.Marshal(h)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("api: spool: %w", err)
	}
	b = append(b, '\n')
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("api: spool: %w", err)
	}
	return &Spool{path: path, header: h, f: f, size: int64(len(b)), last: map[string]int64{}, notify: make(chan struct{}, 1)}, nil
}

// OpenSpool opens an unfinished spool, to upload its rest or to add lines
// to it: it locks it (ErrSpoolBusy when another process holds it), reads
// its header and the last line number of each stream, and cuts off a torn
// last record.
func OpenSpool(path string) (*Spool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("api: spool: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	s := &Spool{path: path, f: f, last: map[string]int64{}, notify: make(chan struct{}, 1)}
	br := bufio.NewReaderSize(f, 64<<10)
	var off int64
	first := true
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			// A torn record (no newline) is cut off; a later Line appends
			// after the last whole one.
			if len(line) > 0 {
				if terr := f.Truncate(off); terr != nil {
					f.Close()
					return nil, fmt.Errorf("api: spool: %w", terr)
				}
			}
			if err != io.EOF {
				f.Close()
				return nil, fmt.Errorf("api: spool: %w", err)
			}
			break
		}
		if first {
			first = false
			if err := json.Unmarshal(line, &s.header); err != nil || s.header.Version != 1 || s.header.Session.ID == "" {
				f.Close()
				return nil, fmt.Errorf("api: spool %s: not a spool (bad header)", path)
			}
		} else {
			var r spoolRecord
			if err := json.Unmarshal(line, &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("api: spool %s: record at byte %d: %w", path, off, err)
			}
			switch {
			case r.Line != nil:
				s.last[r.Line.Stream] = max(s.last[r.Line.Stream], r.Line.N)
			case r.End != nil:
				s.ended = true
			}
		}
		off += int64(len(line))
	}
	if first {
		f.Close()
		return nil, fmt.Errorf("api: spool %s: empty", path)
	}
	s.size = off
	return s, nil
}

// Path returns the spool's file name.
func (s *Spool) Path() string { return s.path }

// Header returns the spool's header.
func (s *Spool) Header() SpoolHeader { return s.header }

// SetHeader changes the header the spool's senders read (not the file's):
// a run resumed with other servers than the ones it was started with.
func (s *Spool) SetHeader(h SpoolHeader) { s.header = h }

// Session returns the id of the spool's session.
func (s *Spool) Session() string { return s.header.Session.ID }

// LastLine returns the number of the last line of stream in the spool.
func (s *Spool) LastLine(stream string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[stream]
}

// Ended reports whether the spool holds the end of its session.
func (s *Spool) Ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Size returns how many bytes of records the file holds.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Line adds a native line to the buffer of records (its Data is copied),
// written by the next Flush, or at once when the buffer passed 64 KiB. A
// line whose TS is zero gets the time now: it may be sent long after.
func (s *Spool) Line(l store.Line) error {
	if l.TS.IsZero() {
		l.TS = time.Now()
	}
	in := NewLineIn(l)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.ended {
		return errors.New("api: spool: line after the end")
	}
	b, err := json.Marshal(spoolRecord{Line: &in})
	if err != nil {
		return fmt.Errorf("api: spool: %w", err)
	}
	s.buf = append(append(s.buf, b...), '\n')
	s.last[in.Stream] = max(s.last[in.Stream], in.N)
	if len(s.buf) >= 64<<10 {
		return s.flushLocked()
	}
	return nil
}

// Flush writes the buffered records to the file.
func (s *Spool) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

func (s *Spool) flushLocked() error {
	if s.err != nil || len(s.buf) == 0 {
		return s.err
	}
	n, err := s.f.Write(s.buf)
	s.size += int64(n)
	s.buf = s.buf[:0]
	if err != nil {
		s.err = fmt.Errorf("api: spool: %w", err)
		return s.err
	}
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return nil
}

// End writes the end of the session and syncs the file. Nothing may be
// added after it. An e without Lines gets the last line number of each
// stream the spool holds, so that the server closes the session only once
// it has them.
func (s *Spool) End(e End) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil
	}
	if e.Lines == nil && len(s.last) > 0 {
		e.Lines = maps.Clone(s.last)
	}
	b, err := json.Marshal(spoolRecord{End: &e})
	if err != nil {
		return fmt.Errorf("api: spool: %w", err)
	}
	s.buf = append(append(s.buf, b...), '\n')
	s.ended = true
	if err := s.flushLocked(); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		s.err = fmt.Errorf("api: spool: %w", err)
	}
	return s.err
}

// Close writes what is buffered and closes the file, releasing its lock;
// the spool stays for a later upload.
func (s *Spool) Close() error {
	err := s.Flush()
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("api: spool: %w", cerr)
	}
	return err
}

// remove deletes a finished spool and its cursor, the lock still held.
func (s *Spool) remove() error {
	err := os.Remove(s.path)
	if rerr := os.Remove(s.path + ".cursor"); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// cursor reads the acknowledged offset of the spool, or the end of its
// header when there is none yet.
func (s *Spool) cursor() int64 {
	min := int64(0)
	if b, err := os.ReadFile(s.path + ".cursor"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n >= 0 {
			min = n
		}
	}
	return min
}

// saveCursor records the acknowledged offset: written beside and renamed,
// so that a crash leaves the old one or the new one.
func (s *Spool) saveCursor(off int64) error {
	tmp := s.path + ".cursor.tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(off, 10)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path+".cursor")
}

// records reads from off the whole records the file holds, up to maxLines
// lines in a window of maxBytes (grown for one record longer than it),
// into buf. It returns the lines as their JSON (slices of buf, valid until
// the next call), the end when it was read, and the offset after the last
// record read; the header is skipped.
func (s *Spool) records(r io.ReaderAt, off int64, maxLines, maxBytes int, buf *[]byte) (lines []json.RawMessage, end *End, next int64, err error) {
	size := s.Size()
	window := int64(maxBytes)
	for {
		want := min(window, size-off)
		if want <= 0 {
			return nil, nil, off, nil
		}
		if int64(cap(*buf)) < want {
			*buf = make([]byte, want)
		}
		b := (*buf)[:want]
		n, err := r.ReadAt(b, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, off, fmt.Errorf("api: spool: %w", err)
		}
		b = b[:n]
		next = off
		for len(lines) < maxLines && end == nil {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				break
			}
			if next > 0 {
				rec := b[:i]
				// A line record is {"line":LINE} as Line writes it: its
				// JSON goes to the server as it is.
				if bytes.HasPrefix(rec, linePrefix) && bytes.HasSuffix(rec, []byte("}")) {
					lines = append(lines, rec[len(linePrefix):len(rec)-1])
				} else {
					var r spoolRecord
					if err := json.Unmarshal(rec, &r); err != nil {
						return nil, nil, off, fmt.Errorf("api: spool %s: record at byte %d: %w", s.path, next, err)
					}
					if r.Line != nil {
						lb, _ := json.Marshal(r.Line)
						lines = append(lines, lb)
					}
					end = r.End
				}
			}
			next += int64(i + 1)
			b = b[i+1:]
		}
		if next > off || want == size-off {
			return lines, end, next, nil
		}
		window *= 2
	}
}

var linePrefix = []byte(`{"line":`)

// IdleSpools returns the spool files (*.spool) of dir that no process
// holds: unfinished uploads that a run left, for `run --resume`.
func IdleSpools(dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.spool"))
	if err != nil {
		return nil, err
	}
	var idle []string
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		if lockFile(f) == nil {
			idle = append(idle, name)
		}
		f.Close()
	}
	return idle, nil
}

// Cursor returns the offset up to which the records were acknowledged,
// as the spool's cursor file holds it (zero when there is none).
func (s *Spool) Cursor() int64 { return s.cursor() }

// SaveCursor records that the records up to offset off were acknowledged:
// the cursor file is written beside and renamed, so that a crash leaves
// the old offset or the new one.
func (s *Spool) SaveCursor(off int64) error { return s.saveCursor(off) }

// Remove deletes a finished spool and its cursor, the lock still held; the
// spool is then closed with Close.
func (s *Spool) Remove() error { return s.remove() }

// Notify returns a channel that receives when records were written to the
// file. One receiver takes each kick.
func (s *Spool) Notify() <-chan struct{} { return s.notify }

// RawRecords reads from off the whole records the file holds (the header
// too, when off is 0), up to maxRecords of them in a window of maxBytes
// (grown for one record longer than it), into buf. It returns each record
// as it is in the file, without its newline (slices of buf, valid until
// the next call), and the offset after the last one; no record means none
// whole was written past off yet.
func (s *Spool) RawRecords(r io.ReaderAt, off int64, maxRecords, maxBytes int, buf *[]byte) (recs [][]byte, next int64, err error) {
	size := s.Size()
	window := int64(maxBytes)
	for {
		want := min(window, size-off)
		if want <= 0 {
			return nil, off, nil
		}
		if int64(cap(*buf)) < want {
			*buf = make([]byte, want)
		}
		b := (*buf)[:want]
		n, err := r.ReadAt(b, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, off, fmt.Errorf("api: spool: %w", err)
		}
		b = b[:n]
		next = off
		for len(recs) < maxRecords {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				break
			}
			recs = append(recs, b[:i])
			next += int64(i + 1)
			b = b[i+1:]
		}
		if next > off || want == size-off {
			return recs, next, nil
		}
		window *= 2
	}
}
