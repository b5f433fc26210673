// Package linkedart writes one published record as a Linked Art (CIDOC CRM)
// JSON-LD document, with CRMarchaeo for stratigraphic units and their
// relations (issue 34). It is pure: the caller gives a neutral Record that
// holds only public data, Encode returns deterministic bytes.
//
// # Choices, and why
//
// The documents must validate against the Linked Art JSON schemas
// (github.com/linked-art/json-validator) and expand, with the Linked Art
// context alone, to CRM and CRMarchaeo IRIs. The schemas fix "type" to one
// string per endpoint (e.g. "HumanMadeObject") and forbid additional
// properties at the top level, so a record can carry neither a second
// rdf:type nor an extension property such as AP11 directly. Hence:
//
//   - Stratigraphic units, finds, samples, burials and unmapped tables are
//     HumanMadeObject (crm:E22). Linked Art's object class is meant for
//     "a human-made object, part thereof, or a natural object with value
//     imbued through interaction with human culture", the closest it has to
//     crm:E18 Physical Thing, of which CRMarchaeo's A8 Stratigraphic Unit is
//     a specialisation; Place would be wrong (a unit is matter, its location
//     is a place). The CRMarchaeo class is given through crm:P2_has_type
//     (classified_as) with the class IRI archaeo:A8_Stratigraphic_Unit as the
//     Type, the CRM's own sub-typing mechanism; a sample likewise carries
//     CRMsci S13 Sample. The admin's AAT term for the kind follows it.
//   - A site is a Place (crm:E53); its part_of lists larger places.
//   - A stratigraphic relation is the reified form of AP11 has physical
//     relation with its AP11.1 type: an AttributeAssignment (crm:E13) in
//     attributed_by (P140i) whose assigned_property (P177) is
//     archaeo:AP11_has_physical_relation, whose assigned (P141) is the other
//     unit and whose classified_as (P2) is the relation type ("above",
//     "cuts", ...). This is the Linked Art pattern for relationships that its
//     API has no property for, and it is what the schema allows.
//   - A radiocarbon date is an AttributeAssignment classified as dating
//     (aat:300054714) and radiocarbon dating, identified by its lab code,
//     assigning the conventional age as a Dimension (value BP, lower/upper
//     limits ±1σ, unit radiocarbon years BP), the error as a Dimension, and
//     one TimeSpan per calibrated range, classified by its probability.
//   - Finds: made_of (P45) materials, dimension (P43), produced_by (P108i)
//     with a TimeSpan and "during" (P10) the period's URI. A unit's
//     production is classified as archaeo:A4_Stratigraphic_Genesis.
//   - Where a thing was found (PartOf a site) is encountered_by (CRMsci
//     S19 Encounter) took_place_at the site; PartOf another record is
//     part_of (P46i), of which the schema allows one.
//   - Public fields: a field holding a vocabulary term classifies the record
//     by that term, the term being classified by the field (Linked Art's
//     meta-type pattern); any other value is a Statement (referred_to_by,
//     a LinguisticObject whose content is the value) classified by the field
//     and by aat:300418049 brief text. The licence is a Statement classified
//     as aat:300435434 whose content is the licence URI.
//   - The landing page and the IIIF manifests are subject_of a
//     LinguisticObject digitally_carried_by a DigitalObject (format
//     text/html, or the IIIF media type with conforms_to IIIF Presentation).
//
// No extension context: the Linked Art context already declares the
// "archaeo:" prefix (http://www.cidoc-crm.org/cidoc-crm/CRMarchaeo/, the
// namespace of the CRMarchaeo RDFS it follows) and P177's values are
// vocabulary-expanded, so "@context" is the single string ContextURL, the
// form the schemas accept without reservation. There is no Context function.
//
// Strata's own terms (field types, relation types, labels of terms without
// an ID, the radiocarbon vocabulary) get IRIs under Record.VocabBase; the
// caller publishes that base under the instance's public URL.
//
// Dates are whole astronomical years written as ISO 8601 / XML Schema 1.1
// date-times: a year starts at "YYYY-01-01T00:00:00Z" and ends at
// "YYYY-12-31T23:59:59Z" (Linked Art's convention), with at least four
// digits and a minus sign before BC years: year 0 (1 BC) is "0000", -500
// (501 BC) is "-0500". RFC 3339, which the schemas name for "date-time",
// cannot write BC years; the schemas' own tooling does not assert formats.
//
// Output is indented with two spaces, keys in a fixed order, a final
// newline, and HTML-significant characters escaped as \u003c etc. (safe to
// embed in a landing page's script element).
package linkedart
