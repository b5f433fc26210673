package fieldsync

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
)

var errBadDevice = errs.New(errs.Invalid, "sync_invalid_mutation", "a device_id is 1 to 100 characters")

// GET /sync/devices/:device_id — how far the server has applied the
// caller's device (last_seq) and how many of its mutations wait: a device
// that lost its answers learns where it stands. A device never seen is at
// 0 with nothing held; another account's device of the same name is not
// this one (actorKey).
func (h *handlers) handleDevice(c *gin.Context) {
	device := c.Param("device_id")
	if device == "" || len(device) > maxNameLen {
		api.Fail(c, errBadDevice)
		return
	}
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	actor := actorKey(api.ActorOf(c))
	last, err := lastSeq(ctx, db, actor, device)
	if err != nil {
		api.Fail(c, err)
		return
	}
	held, err := heldCount(ctx, db, actor, device)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"device_id": device, "last_seq": last, "held": held})
}
