package auth

import "strings"

// Privilege levels: a lower number means more rights (SPEC §2.7, CONTRACT §4).
const (
	SuperAdmin = 1
	Admin      = 10
	Writer     = 20
	SelfWriter = 25
	Reader     = 30
	Pending    = 40
)

// PrivilegeName returns the display name of a level.
func PrivilegeName(level int) string {
	switch level {
	case SuperAdmin:
		return "super_admin"
	case Admin:
		return "admin"
	case Writer:
		return "writer"
	case SelfWriter:
		return "self_writer"
	case Reader:
		return "reader"
	case Pending:
		return "pending"
	}
	return "unknown"
}

// PrivilegeByName reads a level given by name, as scripts send it: the
// names PrivilegeName gives, and "read", "edit"/"write" for reader and
// writer (any case). ok is false for anything else.
func PrivilegeByName(name string) (level int, ok bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "super_admin", "superadmin":
		return SuperAdmin, true
	case "admin":
		return Admin, true
	case "writer", "write", "edit":
		return Writer, true
	case "self_writer", "selfwriter":
		return SelfWriter, true
	case "reader", "read":
		return Reader, true
	case "pending":
		return Pending, true
	}
	return 0, false
}

// ValidPrivilege reports whether level is one of the defined levels.
func ValidPrivilege(level int) bool { return PrivilegeName(level) != "unknown" }
