package apps

import (
	"regexp"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
)

// reserved names collide with paths the service or its front-end uses
// (SPEC §8); compared case-insensitively.
var reserved = map[string]bool{
	"api": true, "index.php": true, "projects": true, "cache": true, "assets": true,
	"favicon.ico": true, "favicon.svg": true, "login": true, "oauth-callback": true, "new-app": true,
	// CONTRACT §10: operations endpoints and the web application's paths.
	"healthz": true, "readyz": true, "metrics": true, "jobs": true, "static": true,
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{1,62}$`)

// ErrInvalidName is returned for a reserved or malformed application name.
var ErrInvalidName = errs.New(errs.Invalid, "invalid_app_name",
	"application names are 2 to 63 characters: a lower-case letter, then lower-case letters, digits or underscores, and not a reserved name")

// IsReserved reports whether name is on the reserved list.
func IsReserved(name string) bool { return reserved[strings.ToLower(name)] }

// ValidateName checks an application name before anything is written.
func ValidateName(name string) error {
	if IsReserved(name) {
		return ErrInvalidName.With("reason", "reserved")
	}
	if !namePattern.MatchString(name) {
		return ErrInvalidName.With("reason", "pattern")
	}
	return nil
}
