package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

var errBadAdminID = errs.New(errs.Invalid, "invalid_id", "the id in the path must be a positive integer")

// adminIDParam reads the numeric :id path parameter.
func adminIDParam(c *gin.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errBadAdminID.With("id", c.Param("id"))
	}
	return id, nil
}

// adminInt is an integer body value that clients send as a JSON number or
// a numeric string (CONTRACT §8); null and "" leave it unset, as forms send
// them for an empty field.
type adminInt struct {
	Set   bool
	Value int64
	names bool // a privilege: its name ("reader") is read as its level
}

func (n *adminInt) UnmarshalJSON(b []byte) error {
	*n = adminInt{names: n.names}
	var v any
	if err := wire.Decode(b, &v, wire.Options{ExactNumbers: true}); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	x, err := wire.Int(v)
	if s, isText := v.(string); err != nil && isText && n.names {
		if level, ok := auth.PrivilegeByName(s); ok {
			x, err = int64(level), nil
		}
	}
	if errors.Is(err, wire.ErrEmpty) {
		return nil
	}
	if err != nil {
		return err
	}
	*n = adminInt{Set: true, Value: x}
	return nil
}

// decodeAdminField decodes one key of a body read as a map and reports whether
// the key was sent; a value of the wrong type is invalid_json naming the key
// and what it must be.
func decodeAdminField(raw map[string]json.RawMessage, key, want string, dst any) (bool, error) {
	v, ok := raw[key]
	if !ok {
		return false, nil
	}
	if err := wire.Decode(v, dst, wire.Options{}); err != nil {
		msg := key + " must be " + want
		return false, errs.New(errs.Invalid, errInvalidJSON.Code, msg).With("detail", msg).With("field", key)
	}
	return true, nil
}

// userInputFrom turns a POST /user body into the domain input. Only keys
// present in the body are changed; null clears the OAuth fields and counts
// as "not sent" for the others.
func userInputFrom(raw map[string]json.RawMessage) (auth.UserInput, error) {
	var in auth.UserInput
	var id adminInt
	if _, err := decodeAdminField(raw, "id", "an integer", &id); err != nil {
		return in, err
	}
	// 0 names no account: clients send it for a new one.
	if id.Set && id.Value < 0 {
		return in, errBadAdminID.With("id", id.Value)
	}
	in.ID = id.Value
	strs := []struct {
		key       string
		dst       **string
		nullClear bool
	}{
		{"name", &in.Name, false}, {"email", &in.Email, false}, {"password", &in.Password, false},
		{"oauth_provider", &in.OAuthProvider, true}, {"oauth_sub", &in.OAuthSub, true},
	}
	for _, f := range strs {
		var v *string
		sent, err := decodeAdminField(raw, f.key, "a string", &v)
		if err != nil {
			return in, err
		}
		if sent && v == nil && f.nullClear {
			v = new(string)
		}
		*f.dst = v
	}
	priv := adminInt{names: true}
	if _, err := decodeAdminField(raw, "privilege", "a level (1, 10, 20, 25, 30, 40) or its name", &priv); err != nil {
		return in, err
	}
	if priv.Set {
		p := int(priv.Value)
		if int64(p) != priv.Value {
			return in, auth.ErrUserPrivilegeInvalid
		}
		in.Privilege = &p
	}
	return in, nil
}

// userView is a user row of GET /users and GET /user/{id}.
type userView struct {
	auth.UserSummary
	Editable bool `json:"editable"`
}

// GET /users (alias GET /user) — every account with its override count and
// whether the caller may edit it.
func (s *Server) handleListUsers(c *gin.Context) {
	users, err := auth.ListUsers(c.Request.Context(), appOf(c).DB)
	if err != nil {
		s.fail(c, err)
		return
	}
	actor := actorOf(c)
	out := make([]userView, len(users))
	for i, u := range users {
		out[i] = userView{u, auth.CanManageUser(actor, u.Privilege)}
	}
	success(c, http.StatusOK, gin.H{"users": out})
}

// GET /user/{id}
func (s *Server) handleGetUser(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	u, err := auth.GetUserSummary(c.Request.Context(), appOf(c).DB, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"user": userView{*u, auth.CanManageUser(actorOf(c), u.Privilege)}})
}

// POST /user — create an account (no id) or change the keys sent (id).
func (s *Server) handleSaveUser(c *gin.Context) {
	var raw map[string]json.RawMessage
	if err := bindJSON(c, &raw); err != nil {
		s.fail(c, err)
		return
	}
	in, err := userInputFrom(raw)
	if err != nil {
		s.fail(c, err)
		return
	}
	id, created, err := auth.SaveUser(c.Request.Context(), appOf(c).DB, actorOf(c), in, s.authn.Cost(), s.now().UTC())
	if err != nil {
		s.fail(c, err)
		return
	}
	body := gin.H{"code": "user_data_saved", "id": id}
	if actor := actorOf(c); !created && in.Password != nil && *in.Password != "" && id == actor.UserID && !actor.IsAPIKey() {
		// One's own new password ended one's sessions: this one goes on
		// with a fresh token (the others are refused from now on).
		u, err := auth.FindUser(c.Request.Context(), appOf(c).DB, id)
		if err == nil {
			err = s.addToken(c, u, body)
		}
		if err != nil {
			s.fail(c, err)
			return
		}
	}
	success(c, http.StatusOK, body)
}

// DELETE /user/{id}
func (s *Server) handleDeleteUser(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := auth.DeleteUser(c.Request.Context(), appOf(c).DB, actorOf(c), id); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "user_deleted", "id": id})
}

// POST /user/{id}/revoke — every token issued to the account before now
// is refused from the next request on.
func (s *Server) handleRevokeUserTokens(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := auth.RevokeTokens(c.Request.Context(), appOf(c).DB, actorOf(c), id, s.now().UTC()); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "token_revoked", "id": id})
}
