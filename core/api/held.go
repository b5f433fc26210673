package api

import (
	"bytes"
	"net/http"

	"github.com/gin-gonic/gin"
)

// HeldResponse keeps what a handler answers (status, headers, body) until
// Release writes it to the real writer, or it is dropped: for a request
// that may be run again and must send only its last run's answer.
type HeldResponse struct {
	gin.ResponseWriter // the real writer
	header             http.Header
	status             int
	written            bool
	body               bytes.Buffer
}

// Hold wraps w; the caller puts the result in the gin context's Writer and
// restores w afterwards.
func Hold(w gin.ResponseWriter) *HeldResponse {
	return &HeldResponse{ResponseWriter: w, header: http.Header{}, status: http.StatusOK}
}

func (h *HeldResponse) Header() http.Header { return h.header }

func (h *HeldResponse) WriteHeader(code int) {
	if code > 0 && !h.written {
		h.status = code
	}
}

func (h *HeldResponse) WriteHeaderNow() { h.written = true }

func (h *HeldResponse) Write(b []byte) (int, error) {
	h.written = true
	return h.body.Write(b)
}

func (h *HeldResponse) WriteString(s string) (int, error) {
	h.written = true
	return h.body.WriteString(s)
}

func (h *HeldResponse) Status() int { return h.status }

func (h *HeldResponse) Size() int {
	if !h.written {
		return -1
	}
	return h.body.Len()
}

func (h *HeldResponse) Written() bool { return h.written }

// Flush keeps holding: nothing reaches the client before Release.
func (h *HeldResponse) Flush() {}

// Release writes the held answer to the real writer.
func (h *HeldResponse) Release() {
	if !h.written {
		return
	}
	dst := h.ResponseWriter.Header()
	for k, v := range h.header {
		dst[k] = v
	}
	h.ResponseWriter.WriteHeader(h.status)
	h.ResponseWriter.WriteHeaderNow()
	_, _ = h.ResponseWriter.Write(h.body.Bytes())
}
