package doitest

import (
	"net/http"
	"net/http/httptest"
	"sync"
)

// Mode is how an injected fault behaves.
type Mode int

const (
	// Fail500 answers 500 without performing the step.
	Fail500 Mode = iota
	// DropAfterCommit performs the step, then closes the connection
	// without answering.
	DropAfterCommit
)

// faults holds armed faults by step name.
type faults struct {
	mu    sync.Mutex
	armed map[string][]Mode
	fired []string
}

func (f *faults) arm(step string, m Mode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed == nil {
		f.armed = map[string][]Mode{}
	}
	f.armed[step] = append(f.armed[step], m)
}

func (f *faults) take(step string) (Mode, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.armed[step]
	if len(q) == 0 {
		return 0, false
	}
	f.armed[step] = q[1:]
	f.fired = append(f.fired, step)
	return q[0], true
}

func (f *faults) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, q := range f.armed {
		n += len(q)
	}
	return n
}

// serve runs h for a request of the given step, applying an armed fault.
func (f *faults) serve(step string, w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	m, ok := f.take(step)
	if !ok {
		h(w, r)
		return
	}
	if m == Fail500 {
		http.Error(w, "injected failure", http.StatusInternalServerError)
		return
	}
	// Commit with the answer thrown away, then drop the connection.
	h(httptest.NewRecorder(), r)
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // closes the connection without a response
}
