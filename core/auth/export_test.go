package auth

// BcryptComparisons exposes the comparison counter to the external tests.
func BcryptComparisons() int64 { return bcryptComparisons.Load() }
