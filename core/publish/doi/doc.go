// Package doi mints a DOI for a published snapshot, through the DataCite
// REST API or Zenodo's deposition API, so that a failure anywhere followed by
// a retry never mints twice.
//
// Minting is a short sequence of remote steps. Mint is given the State saved
// by the previous attempt and calls save after every step the remote side
// has committed, before starting the next, so the caller (a job) persists
// how far it got. A retry passes that State back and Mint resumes; a State
// whose Step is "done" returns the Result without any request.
//
// DataCite: the DOI suffix is derived from Request.Key (SuffixFor), and the
// record is written with PUT /dois/{doi}, which creates or updates, so even
// a lost response on the very first request cannot create a second DOI: the
// retry writes the same DOI. Then the record is made findable (event
// "publish", skipped when a GET shows it already is). A new version carries
// IsNewVersionOf the previous DOI, and the previous record is updated to add
// IsPreviousVersionOf the new one (its other related identifiers are kept).
//
// Zenodo: a deposition is created (or, for a new version, obtained with
// actions/newversion on the previous deposition, which Zenodo documents as
// returning the same draft while it is unpublished), the files are uploaded
// through the bucket link with their MD5 checked, the metadata is set and
// the deposition is published; the DOI comes back on publish. The State is
// saved as "creating" before the create request, and the created
// deposition carries an opaque marker derived from Key in its notes. If the
// create response is lost, the retry lists the user's drafts and adopts the
// one carrying the marker instead of creating another. Guarantee: at most
// one deposition per Key is ever published, because publish is only ever
// called on the deposition recorded in State, and a retry of "publishing"
// first reads the deposition and only publishes it if it is not yet
// submitted. Limit: if Zenodo's search index has not yet seen a draft
// created just before the crash (it refreshes within about a second), the
// retry cannot find it and creates a second draft; that stray draft is never
// published (no DOI is registered for it) and shows in the user's Zenodo
// uploads until deleted. Wait a few seconds before retrying to avoid it.
//
// Errors are *errs.Error with stable codes: doi_auth_failed (credentials
// refused), doi_rejected (the service refused the request; its message is
// included, bounded), doi_unavailable (5xx, 429, network errors, timeouts:
// Retryable reports true), doi_state_mismatch (a State from another provider
// or key), doi_invalid (bad Request). Credentials never appear in errors:
// requests carry them in headers only, and transport errors are reported
// without the request URL.
package doi
