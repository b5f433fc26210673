package plugintest

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// Rights is what one actor may do on one table, as the server's per-table
// privileges give it (an override of the actor's level, and a row
// subset).
type Rights struct {
	// Privilege is the actor's level on the table
	// (pluginsdk.PrivilegeReader and the others; lower is more). Above
	// PrivilegeReader (40, as an admin sets to deny a table) the actor may
	// not read it. 0: the level the actor was called with.
	Privilege int
	// Subset is the actor's row subset on the table, a filter object of
	// the language Match reads: QueryRecords as the actor sees only the
	// rows it matches. nil: every row.
	Subset map[string]any
}

// actorKey names an actor for rights: its user, else its API key.
func actorKey(a pluginsdk.Actor) string {
	if a.UserID != 0 {
		return fmt.Sprintf("%s/user/%d", a.App, a.UserID)
	}
	return fmt.Sprintf("%s/key/%d", a.App, a.APIKeyID)
}

// SetRights gives actor (its application, and its user or API key) rights
// on table, as a per-table privilege does on the server: QueryRecords as
// that actor is refused (PermissionDenied, not_enough_privilege) when the
// level does not allow reading, and sees only the rows of Subset; the
// harness's route calls naming the table (a :tb path parameter or the
// route's TableParam, "tb" by default, in the query) are gated at that
// level and the plugin receives it as Actor.Privilege. A plugin table
// (the child table of one of the plugin's features) is no more open than
// its parent.
func (h *FakeHost) SetRights(actor pluginsdk.Actor, table string, r Rights) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rights == nil {
		h.rights = map[string]map[string]Rights{}
	}
	k := actorKey(actor)
	if h.rights[k] == nil {
		h.rights[k] = map[string]Rights{}
	}
	if r.Subset != nil {
		r.Subset = maps.Clone(r.Subset)
	}
	h.rights[k][table] = r
}

// SetFeatures says which of the plugin's features are active on table in
// app, the others being inactive, as an admin activates them on the
// server. There, QueryRecords on the table sees no column of an inactive
// feature: asking for one or filtering on one is InvalidArgument
// (invalid_field), and rows come without them; the feature's child table
// <table>_<suffix> is NotFound (table_not_found). A table never given to
// SetFeatures has every feature active.
func (h *FakeHost) SetFeatures(app, table string, active ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.features == nil {
		h.features = map[string]map[string][]string{}
	}
	if h.features[app] == nil {
		h.features[app] = map[string][]string{}
	}
	h.features[app][table] = slices.Clone(active)
}

// hostError is a Host error as the server sends it: the code as the
// ErrorInfo reason in pluginsdk's domain, and "<code>: <message>".
func hostError(c codes.Code, reason, format string, args ...any) error {
	st := status.New(c, reason+": "+fmt.Sprintf(format, args...))
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: pluginsdk.ErrorDomain}); err == nil {
		st = d
	}
	return st.Err()
}

// tableView is what the server shows of a table to a plugin's query: the
// columns it hides (of inactive features) and the parent of a feature's
// child table. Called with h.mu held.
func (h *FakeHost) tableView(app, table string) (hidden map[string]bool, parent string, err error) {
	if h.manifest == nil {
		return nil, "", nil
	}
	if active, ok := h.features[app][table]; ok {
		hidden = map[string]bool{}
		for _, f := range h.manifest.Features {
			if !slices.Contains(active, f.Name) {
				for _, c := range f.Columns {
					hidden[c.Name] = true
				}
			}
		}
		return hidden, "", nil
	}
	// A feature's child table <parent>_<suffix>.
	for _, f := range h.manifest.Features {
		if f.Child == nil {
			continue
		}
		p, ok := strings.CutSuffix(table, "_"+f.Child.Suffix)
		if !ok || p == "" {
			continue
		}
		if active, set := h.features[app][p]; set && !slices.Contains(active, f.Name) {
			return nil, "", hostError(codes.NotFound, "table_not_found", "no table %q (the feature %s is not active on %s)", table, f.Name, p)
		}
		return nil, p, nil
	}
	return nil, "", nil
}

// grant is the actor's level and row subset on table (and its parent, for
// a feature's child table): the level the actor was called with unless
// SetRights says otherwise. Called with h.mu held.
func (h *FakeHost) grant(a pluginsdk.Actor, table, parent string) (level int, subset map[string]any) {
	level = a.Privilege
	r, ok := h.rights[actorKey(a)][table]
	if ok && r.Privilege != 0 {
		level = r.Privilege
	}
	subset = r.Subset
	if parent != "" {
		if pr, ok := h.rights[actorKey(a)][parent]; ok && pr.Privilege > level {
			level = pr.Privilege
		}
	}
	return level, subset
}

// readable reports whether a level may read (0: the actor's level is
// unknown to the fake, which then lets it read).
func readable(level int) bool { return level <= pluginsdk.PrivilegeReader }

// filterFields lists the field keys of a filter object, inside _and and
// _or groups too.
func filterFields(f map[string]any) []string {
	var out []string
	for k, v := range f {
		switch k {
		case "_and", "_or":
			list, _ := v.([]any)
			for _, x := range list {
				if m, ok := x.(map[string]any); ok {
					out = append(out, filterFields(m)...)
				}
			}
		default:
			out = append(out, k)
		}
	}
	return out
}

// routeTables are the tables a route call names, as the server's gate
// reads them: the :tb path parameter and the route's TableParam ("tb" by
// default) in the query, repeated or comma-separated.
func routeTables(r pluginsdk.Route, params map[string]string, q url.Values) []string {
	var out []string
	if tb := params["tb"]; tb != "" {
		out = append(out, tb)
	}
	name := r.TableParam
	if name == "" {
		name = "tb"
	}
	for _, v := range q[name] {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// tableLevel is the actor's level for a call on tables: the least of its
// levels on them (SetRights), or its own level when no rights are set.
func (h *FakeHost) tableLevel(a pluginsdk.Actor, tables []string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	level := a.Privilege
	for i, t := range tables {
		_, parent, _ := h.tableView(a.App, t)
		if l, _ := h.grant(a, t, parent); i == 0 || l > level {
			level = l
		}
	}
	return level
}
