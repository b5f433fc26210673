package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// OwnedAction is the handler of a change to an item a user owns (a saved
// query, a chart: share, unshare, delete) at /…/:id: do gets the item's
// id, the caller and whether they are an admin (who may change anyone's);
// success answers {code}.
func OwnedAction(notFound *errs.Error, code string, do func(c *gin.Context, id, user int64, admin bool) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := PathID(c, "id", notFound)
		if !ok {
			return
		}
		a := ActorOf(c)
		if err := do(c, id, a.UserID, a.Privilege <= auth.Admin); err != nil {
			Fail(c, err)
			return
		}
		Success(c, http.StatusOK, gin.H{"code": code})
	}
}

// MayChange is the rule behind OwnedAction for what users save and may
// share (saved queries, charts, assemblage analyses): its owner or an
// admin may change it; to anyone else a shared item is read-only
// (notOwner) and a private one does not exist (notFound).
func MayChange(owner *int64, shared bool, user int64, admin bool, notFound, notOwner error) error {
	if admin || (owner != nil && *owner == user) {
		return nil
	}
	if !shared {
		return notFound
	}
	return notOwner
}
