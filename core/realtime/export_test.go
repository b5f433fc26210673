package realtime

import "time"

// SetMissedWakeEvery sets how often the listeners started from now on
// wake every stream without a notification; restore puts it back.
func SetMissedWakeEvery(d time.Duration) (restore func()) {
	was := missedWakeEvery.Swap(int64(d))
	return func() { missedWakeEvery.Store(was) }
}
