package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
)

// ClaimAsNode makes node take the next queued job, as a node's river
// client does when it starts one, and records node's heartbeat at seen:
// the state a server killed while running that job leaves behind.
func ClaimAsNode(ctx context.Context, s *System, node string, seen time.Time) (int64, error) {
	rows, err := s.st.exec.JobGetAvailable(ctx, &riverdriver.JobGetAvailableParams{
		ClientID: node, MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: s.st.schema,
	})
	if err != nil {
		return 0, err
	}
	if len(rows.Jobs) != 1 {
		return 0, fmt.Errorf("claimed %d jobs", len(rows.Jobs))
	}
	return rows.Jobs[0].ID, s.st.beat(ctx, node, seen)
}

// BeatAs records node's heartbeat at seen.
func BeatAs(ctx context.Context, s *System, node string, seen time.Time) error {
	return s.st.beat(ctx, node, seen)
}
