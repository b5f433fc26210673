// Package doitest provides local fakes of the DataCite REST API and of
// Zenodo's deposition API, speaking their wire protocols closely enough to
// catch client mistakes (credentials, content types, JSON:API shape, the
// deposition lifecycle, bucket uploads with MD5 checksums, publish only
// once, new versions), with fault injection and inspection for tests.
//
//	dc := doitest.NewDataCite(t, "10.5072", "ABC.XYZ", "secret")
//	p := doi.NewDataCite(dc.URL, "ABC.XYZ", "secret", "10.5072", nil)
//	dc.FailNext("publish", doitest.DropAfterCommit)
//	... mint, retry ...
//	dc.DOIs() // every DOI, with its state and publish count
//
//	z := doitest.NewZenodo(t, "token")
//	p := doi.NewZenodo(z.URL, "token", nil)
//	z.Depositions()
//
// Faults: FailNext(step, Fail500) answers the next request of that step
// with a 500 and changes nothing; FailNext(step, DropAfterCommit) performs
// it and then closes the connection without an answer, so the client sees
// an error although the server committed. Each armed fault fires once.
//
// Where the real services are lenient the fakes are strict on purpose: a
// second "publish" of a findable DataCite DOI and a second publish of a
// Zenodo deposition are refused, so a client that relies on them shows up.
// The servers are closed by t.Cleanup.
package doitest
