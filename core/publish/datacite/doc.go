// Package datacite describes a published snapshot with the DataCite Metadata
// Schema 4.x: the XML document (kernel-4 namespace, valid against the 4.7 XSD)
// that travels inside the snapshot and over OAI-PMH, and the same metadata as
// the "attributes" object of the DataCite REST API (JSON:API), which the doi
// package sends when it mints a DOI.
//
// Both renderings are pure functions of a Metadata value: no clock, no I/O,
// and the same value always gives byte-identical output.
//
// Before a DOI exists the XML still needs an <identifier> (the XSD makes it
// required, with a free-text identifierType since 4.2). A Metadata whose DOI
// is empty therefore carries its landing page as identifierType="URL"; this
// is valid against the XSD, but DataCite itself only registers records whose
// identifier is a DOI, so such XML is for the snapshot and for harvesters,
// never for DataCite's MDS API. Once minted, the DOI replaces it.
//
// Text that XML 1.0 cannot carry (control characters other than tab, line
// feed and carriage return, U+FFFE, U+FFFF, invalid UTF-8) is refused by
// Validate with the code datacite_bad_char, never stripped silently: a title
// that changed on its way into a citation is worse than an error the admin
// can fix.
package datacite
