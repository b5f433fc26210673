package fieldsync

// RememberTempID lets the upload tests stand for a push that created a
// record offline (push.go is another branch's).
var RememberTempID = rememberTempID
