package auth

// Access is the privilege a route requires: the one route→privilege table
// (server.routeTable) names an Access per route, and every credential, JWT
// or API key, is checked against it in the same place.
type Access int

const (
	Public         Access = iota // no credential
	Enter                        // any signed-in, non-pending account (< 40)
	Read                         // ≤ 30
	AddNew                       // ≤ 25: create records
	Edit                         // ≤ 25 at the gate; a self_writer's row rule is applied by records
	AdminOnly                    // ≤ 10
	SuperAdminOnly               // = 1
)

var accessNames = map[Access]string{
	Public: "public", Enter: "enter", Read: "read", AddNew: "add_new", Edit: "edit",
	AdminOnly: "admin", SuperAdminOnly: "super_admin",
}

func (a Access) String() string { return accessNames[a] }

// Allows reports whether a privilege level passes the gate.
func (a Access) Allows(level int) bool {
	switch a {
	case Public:
		return true
	case Enter:
		return level < Pending
	case Read:
		return level <= Reader
	case AddNew, Edit:
		return level <= SelfWriter
	case AdminOnly:
		return level <= Admin
	case SuperAdminOnly:
		return level == SuperAdmin
	}
	return false
}

// TableScoped reports whether a per-table override may change the level
// checked for this access: record work may be raised or lowered per table,
// entering and administration may not.
func (a Access) TableScoped() bool { return a == Read || a == AddNew || a == Edit }

// Actor is who is making a request.
type Actor struct {
	UserID    int64 // 0 for an API key
	KeyID     int64 // 0 for a user
	Name      string
	Email     string
	Privilege int // global level, re-read from the database on every request
}

// IsAPIKey reports whether the actor is an API key.
func (a *Actor) IsAPIKey() bool { return a.KeyID != 0 }

// CanEditRow applies the self_writer rule: at 25 a caller may change only
// rows it created; a key has no identity, so as 25 it may only create.
func CanEditRow(level int, actorUserID int64, creator *int64) bool {
	if level <= Writer {
		return true
	}
	if level == SelfWriter {
		return actorUserID != 0 && creator != nil && *creator == actorUserID
	}
	return false
}
