package datacite

import "strings"

// Attributes returns the metadata as the "attributes" member of a DataCite
// REST API (JSON:API) DOI resource: doi, url, types, creators, titles,
// publisher, publicationYear and the optional lists, in DataCite's JSON
// property names (schemeUri, not schemeURI). Only plain maps, slices,
// strings and numbers are used, so encoding/json renders it with sorted keys
// (deterministic). Call Validate first; Attributes does not check.
func (m Metadata) Attributes() map[string]any {
	a := map[string]any{
		"url":             m.URL,
		"types":           map[string]any{"resourceTypeGeneral": "Dataset", "resourceType": m.ResourceType},
		"publisher":       m.Publisher,
		"publicationYear": m.PublicationYear,
		"schemaVersion":   Namespace,
	}
	if m.ResourceType == "" {
		delete(a["types"].(map[string]any), "resourceType")
	}
	if m.DOI != "" {
		a["doi"] = m.DOI
	}
	creators := []any{}
	for _, c := range m.Creators {
		o := map[string]any{"name": c.Name}
		if c.GivenName != "" || c.FamilyName != "" || c.ORCID != "" {
			o["nameType"] = "Personal"
		}
		if c.GivenName != "" {
			o["givenName"] = c.GivenName
		}
		if c.FamilyName != "" {
			o["familyName"] = c.FamilyName
		}
		if c.ORCID != "" {
			id, err := NormalizeORCID(c.ORCID)
			if err != nil {
				id = c.ORCID
			}
			o["nameIdentifiers"] = []any{map[string]any{
				"nameIdentifier": id, "nameIdentifierScheme": "ORCID", "schemeUri": "https://orcid.org",
			}}
		}
		if strings.TrimSpace(c.Affiliation) != "" {
			o["affiliation"] = []any{map[string]any{"name": c.Affiliation}}
		}
		creators = append(creators, o)
	}
	a["creators"] = creators
	titles := []any{}
	for _, t := range m.Titles {
		titles = append(titles, map[string]any{"title": t})
	}
	a["titles"] = titles
	if len(m.Descriptions) > 0 {
		l := []any{}
		for _, d := range m.Descriptions {
			l = append(l, map[string]any{"description": d, "descriptionType": "Abstract"})
		}
		a["descriptions"] = l
	}
	if len(m.Subjects) > 0 {
		l := []any{}
		for _, s := range m.Subjects {
			l = append(l, nonEmpty("subject", s.Term, "subjectScheme", s.Scheme, "schemeUri", s.SchemeURI, "valueUri", s.ValueURI))
		}
		a["subjects"] = l
	}
	if len(m.Rights) > 0 {
		l := []any{}
		for _, r := range m.Rights {
			o := nonEmpty("rights", r.Name, "rightsUri", r.URI, "rightsIdentifier", r.Identifier)
			if r.Identifier != "" {
				o["rightsIdentifierScheme"] = "SPDX"
				o["schemeUri"] = "https://spdx.org/licenses/"
			}
			l = append(l, o)
		}
		a["rightsList"] = l
	}
	if m.Version != "" {
		a["version"] = m.Version
	}
	if m.Language != "" {
		a["language"] = m.Language
	}
	if len(m.Dates) > 0 {
		l := []any{}
		for _, d := range m.Dates {
			l = append(l, map[string]any{"date": d.Value, "dateType": d.Type})
		}
		a["dates"] = l
	}
	if len(m.RelatedIdentifiers) > 0 {
		a["relatedIdentifiers"] = RelatedAttributes(m.RelatedIdentifiers)
	}
	if len(m.Formats) > 0 {
		a["formats"] = strs(m.Formats)
	}
	if len(m.Sizes) > 0 {
		a["sizes"] = strs(m.Sizes)
	}
	if len(m.GeoLocations) > 0 {
		l := []any{}
		for _, g := range m.GeoLocations {
			l = append(l, map[string]any{"geoLocationBox": map[string]any{
				"westBoundLongitude": g.West, "eastBoundLongitude": g.East,
				"southBoundLatitude": g.South, "northBoundLatitude": g.North,
			}})
		}
		a["geoLocations"] = l
	}
	return a
}

// RelatedAttributes renders related identifiers as the REST API's
// relatedIdentifiers list.
func RelatedAttributes(rs []Related) []any {
	l := []any{}
	for _, r := range rs {
		l = append(l, map[string]any{
			"relatedIdentifier": r.Identifier, "relatedIdentifierType": r.Type, "relationType": r.Relation,
		})
	}
	return l
}

func strs(s []string) []any {
	l := make([]any, len(s))
	for i, v := range s {
		l[i] = v
	}
	return l
}

func nonEmpty(kv ...string) map[string]any {
	o := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			o[kv[i]] = kv[i+1]
		}
	}
	return o
}
