package filter

// Caps keep a filter's cost bounded whatever a caller sends (DESIGN §4).
// Going beyond any of them answers 400 invalid_filter with a detail.
const (
	// MaxInput is the size of the raw filter: JSON bytes, or the bytes of
	// the filter[...] query parameters (names and values).
	MaxInput = 64 << 10
	// MaxDepth is how deeply groups and nested conditions may nest; the
	// top-level object is depth 1.
	MaxDepth = 10
	// MaxNodes counts conditions, groups and nested conditions.
	MaxNodes = 200
	// MaxList is the length of an _in or _nin list.
	MaxList = 1000
	// MaxText is the length in bytes of one operand.
	MaxText = 1000
	// MaxHops is how many subqueries a condition may cross (SPEC §8).
	MaxHops = 2
)
