// Package oaipmh serves an application's public records over the Open
// Archives Initiative Protocol for Metadata Harvesting, version 2.0, so that
// aggregators (ARIADNE, BASE, OpenAIRE) can harvest them.
//
// The package is pure protocol: it parses and checks requests, pages through
// a Repository with signed resumption tokens and writes the XML answers. It
// knows nothing of the database; the caller implements Repository over the
// publish scope, so what is harvestable is exactly what the Repository lists.
//
// Supported: the six verbs (Identify, ListMetadataFormats, ListSets,
// ListIdentifiers, ListRecords, GetRecord) by GET and by POST
// (application/x-www-form-urlencoded), every error code of the protocol,
// from/until in day and seconds granularity, sets, deleted records and
// resumption tokens carrying a cursor (never completeListSize, which would
// need a count per page). Responses are deterministic given Options.Now and
// the Repository's answers.
package oaipmh
