package files

import (
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
)

// ErrFileTooLarge refuses an uploaded file over the instance's cap.
var ErrFileTooLarge = errs.New(errs.TooLarge, "too_large", "the request body is larger than allowed").
	With("detail", "the file is larger than allowed")

// CapReader fails its reads with ErrFileTooLarge once more than max bytes
// have come, so an upload is cut off while it streams, never held whole.
func CapReader(r io.Reader, max int64) io.Reader { return &capped{r: r, left: max, max: max} }

type capped struct {
	r         io.Reader
	left, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, ErrFileTooLarge.With("limit", c.max)
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, ErrFileTooLarge.With("limit", c.max)
	}
	return n, err
}

// ContentDisposition writes RFC 6266's header for a file's original name:
// an ASCII fallback name and the exact one as filename* (RFC 8187). The
// name is metadata only: nothing in it can break the header.
func ContentDisposition(kind, name string) string {
	fallback := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' || r == ';' {
			return '_'
		}
		return r
	}, name)
	if _, params, err := mime.ParseMediaType(kind + `; filename="` + fallback + `"`); err != nil || params["filename"] != fallback {
		fallback = "file"
	}
	return fmt.Sprintf(`%s; filename="%s"; filename*=UTF-8''%s`, kind, fallback, strings.ReplaceAll(url.PathEscape(name), "'", "%27"))
}
