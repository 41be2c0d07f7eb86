package localcarrier

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"parley/provider/twilio"
)

// stateFile is the append-only log under Config.StateDir.
const stateFile = "messages.log"

// record is one line of the state log: the whole state of one message after
// a change. The last record of a sid wins on reload. Owed says a status
// callback for the recorded status is still to be posted; Deleted says the
// owner deleted the message.
type record struct {
	Message twilio.Message `json:"message"`
	// Consent, when set, is a change of a phone's opt-out instead of a
	// message's state.
	Consent  *consent `json:"consent,omitempty"`
	Callback string   `json:"callback,omitempty"`
	Owed     bool     `json:"owed,omitempty"`
	Deleted  bool     `json:"deleted,omitempty"`
}

// journal appends records to the state log and makes each durable (fsync)
// before the change it records is acted upon. A writer goroutine commits
// the records that queued up meanwhile with one fsync, so a busy batch pays
// one fsync per group, not per message.
type journal struct {
	f    *os.File
	reqs chan journalReq
	done chan struct{}
}

type journalReq struct {
	line []byte
	err  chan error
}

// openJournal reads the state log in dir (creating dir and the log when
// missing) and returns the records in the order written, and the journal
// to append to. A last line cut short by a crash mid-write is dropped and
// cut from the file; any other bad line is an error, never silently lost.
func openJournal(dir string) (*journal, []record, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("carrier state: %w", err)
	}
	path := filepath.Join(dir, stateFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("carrier state: %w", err)
	}
	recs, good, err := readRecords(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("carrier state %s: %w", path, err)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("carrier state: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("carrier state: %w", err)
	}
	j := &journal{f: f, reqs: make(chan journalReq, 1024), done: make(chan struct{})}
	go j.run()
	return j, recs, nil
}

// readRecords decodes every complete line of r and returns the offset just
// past the last good one.
func readRecords(r io.Reader) ([]record, int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var recs []record
	var good int64
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// No newline: a write cut short by a crash. Drop it.
			return recs, good, nil
		}
		if err != nil {
			return nil, 0, err
		}
		var rec record
		if jerr := json.Unmarshal(bytes.TrimSuffix(line, []byte("\n")), &rec); jerr != nil {
			if _, perr := br.Peek(1); errors.Is(perr, io.EOF) {
				// The last line, complete but torn (a crash between the
				// data and its newline reaching the disk): drop it too.
				return recs, good, nil
			}
			return nil, 0, fmt.Errorf("line %d: %w", lineNo, jerr)
		}
		recs = append(recs, rec)
		good += int64(len(line))
	}
}

// run writes queued records, fsyncs once per group and answers each.
func (j *journal) run() {
	defer close(j.done)
	var buf bytes.Buffer
	for req := range j.reqs {
		group := []journalReq{req}
		buf.Reset()
		buf.Write(req.line)
	more:
		for len(group) < 4096 {
			select {
			case r, ok := <-j.reqs:
				if !ok {
					break more
				}
				group = append(group, r)
				buf.Write(r.line)
			default:
				break more
			}
		}
		_, err := j.f.Write(buf.Bytes())
		if err == nil {
			err = j.f.Sync()
		}
		for _, r := range group {
			r.err <- err
		}
	}
}

// enqueue queues rec and returns a function that waits until it is on
// disk. Records are written in the order they were queued.
func (j *journal) enqueue(rec record) func() error {
	line, err := json.Marshal(rec)
	if err != nil {
		return func() error { return err }
	}
	req := journalReq{line: append(line, '\n'), err: make(chan error, 1)}
	j.reqs <- req
	return func() error { return <-req.err }
}

// close stops the writer after the records already queued and closes the log.
func (j *journal) close() error {
	close(j.reqs)
	<-j.done
	return j.f.Close()
}
