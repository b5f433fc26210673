package auth

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

// ValidPrivilege reports whether level is one of the defined levels.
func ValidPrivilege(level int) bool { return PrivilegeName(level) != "unknown" }
