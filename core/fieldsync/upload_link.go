package fieldsync

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
)

// linkWaiting makes and links, right after a push, the whole uploads of
// the pusher that waited for a record the push just created (their
// device's temp_id): a photo that arrived before its record is linked by
// the push itself, not on the device's next look at the upload. created
// holds, per device, the temp_ids the push mapped. A failure is left for
// that next look (GET or PUT tries again): the push's answer is about
// its mutations, and they are done.
func (h *handlers) linkWaiting(c *gin.Context, actor string, created map[string]map[string]bool) {
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	for device, temps := range created {
		ids, err := waitingUploads(c, actor, device)
		if err != nil {
			return
		}
		for _, id := range ids {
			u, err := loadUpload(ctx, db, actor, id, false)
			if err != nil || !u.whole() || !temps[u.TempID] {
				continue
			}
			if _, err := h.finish(c, u); err != nil {
				return
			}
		}
	}
}

// waitingUploads are the ids of actor's device's uploads waiting for
// their record (at most the open uploads an account may have).
func waitingUploads(c *gin.Context, actor, device string) ([]string, error) {
	db := api.AppOf(c).DB
	rows, err := db.Query(c.Request.Context(), `SELECT upload_id FROM `+db.Sys("sync_uploads")+
		` WHERE actor = ? AND device_id = ? AND status = ?`, actor, device, statusWaiting)
	if err != nil {
		return nil, fmt.Errorf("read waiting uploads: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read waiting uploads: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
