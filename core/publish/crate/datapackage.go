package crate

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// DataPackageProfile is the Frictionless profile datapackage.json declares
// in "$schema": Data Package 2.0.
const DataPackageProfile = "https://datapackage.org/profiles/2.0/datapackage.json"

// Package is a Frictionless Data Package: the tables of a snapshot.
type Package struct {
	// Name is lowercase letters, digits and . _ - (the v1 rule; v2 only
	// recommends it).
	Name, Title, Description string
	// ID is the persistent identifier (the DOI URL), optional.
	ID       string
	Homepage string
	Licenses []License
	Version  string
	Created  time.Time
	Keywords []string
	// Contributors are written with Frictionless v2's roles.
	Contributors []Contributor
	Resources    []Resource
}

// Contributor is a Frictionless contributor: Title is the person's or
// organisation's name, Path a URL about them (the ORCID URL), Roles e.g.
// "author", "publisher".
type Contributor struct {
	Title, GivenName, FamilyName, Path, Email, Organization string
	Roles                                                   []string
}

// Resource is a tabular data resource: one CSV file. Bytes and Hash come
// from the CSVWriter that wrote it.
type Resource struct {
	Name, Path, Title, Description string
	Schema                         Schema
	Bytes                          int64
	// Hash is "sha256:<hex>" (CSVWriter.Hash).
	Hash string
}

// Schema is a Table Schema.
type Schema struct {
	Fields      []Field
	PrimaryKey  []string
	ForeignKeys []ForeignKey
	// MissingValues defaults to [""] when nil.
	MissingValues []string
}

// ForeignKey says Fields of this resource hold values of Reference.Fields
// of the resource named Reference.Resource (which may be this resource).
type ForeignKey struct {
	Fields    []string
	Reference Reference
}

// Reference is the target of a foreign key.
type Reference struct {
	Resource string
	Fields   []string
}

// Field types understood by CSVWriter and CheckPackage.
const (
	TypeString   = "string"
	TypeInteger  = "integer"
	TypeNumber   = "number"
	TypeBoolean  = "boolean"
	TypeDate     = "date"
	TypeDatetime = "datetime"
	TypeYear     = "year"
	TypeArray    = "array"
	TypeObject   = "object"
	TypeGeoJSON  = "geojson"
)

var fieldTypes = []string{TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeDate, TypeDatetime, TypeYear, TypeArray, TypeObject, TypeGeoJSON}

// Field is a Table Schema field. Format is "" (default) for all types except
// string, where "uri" and "email" are checked.
type Field struct {
	Name, Title, Description string
	Type                     string
	Format                   string
	Constraints              *Constraints
	// RDFType is the URI of the term the field's values are (e.g. a CIDOC
	// CRM class), optional.
	RDFType string
}

// Constraints are Table Schema constraints. Minimum and Maximum are given
// as the field's lexical form ("10", "2020-01-01") and written with the
// JSON type the profile expects for the field type.
type Constraints struct {
	Required, Unique     bool
	Enum                 []string
	Minimum, Maximum     string
	MinLength, MaxLength *int
	Pattern              string
}

var nameRe = regexp.MustCompile(`^[a-z0-9._-]+$`)

// CheckSchema checks a Table Schema on its own: known types, unique field
// names, keys naming existing fields, constraints that parse as the type.
func CheckSchema(s Schema) error {
	if len(s.Fields) == 0 {
		return fmt.Errorf("table schema: no fields")
	}
	names := map[string]bool{}
	for _, f := range s.Fields {
		if f.Name == "" || strings.HasPrefix(f.Name, "\uFEFF") || !utf8.ValidString(f.Name) {
			return fmt.Errorf("table schema: field name %q: empty, invalid UTF-8 or starting with a BOM", f.Name)
		}
		if names[f.Name] {
			return fmt.Errorf("table schema: field %q twice", f.Name)
		}
		names[f.Name] = true
		if !slices.Contains(fieldTypes, f.Type) {
			return fmt.Errorf("table schema: field %q: unknown type %q", f.Name, f.Type)
		}
		if f.Format != "" && !(f.Type == TypeString && (f.Format == "uri" || f.Format == "email")) {
			return fmt.Errorf("table schema: field %q: format %q not supported for %s", f.Name, f.Format, f.Type)
		}
		if c := f.Constraints; c != nil {
			for _, v := range append(slices.Clone(c.Enum), c.Minimum, c.Maximum) {
				if v == "" {
					continue
				}
				if _, err := parseCell(f, v); err != nil {
					return fmt.Errorf("table schema: field %q: constraint value: %w", f.Name, err)
				}
			}
			if c.Pattern != "" {
				if _, err := regexp.Compile("^(?:" + c.Pattern + ")$"); err != nil {
					return fmt.Errorf("table schema: field %q: pattern: %w", f.Name, err)
				}
			}
		}
	}
	if s.MissingValues != nil && !slices.Contains(s.MissingValues, "") {
		return fmt.Errorf("table schema: missingValues must include \"\" (CSVWriter writes missing values as empty cells)")
	}
	for _, k := range s.PrimaryKey {
		if !names[k] {
			return fmt.Errorf("table schema: primary key names unknown field %q", k)
		}
	}
	for _, fk := range s.ForeignKeys {
		if len(fk.Fields) == 0 || len(fk.Fields) != len(fk.Reference.Fields) {
			return fmt.Errorf("table schema: foreign key %v: fields and reference fields differ in number", fk.Fields)
		}
		for _, k := range fk.Fields {
			if !names[k] {
				return fmt.Errorf("table schema: foreign key names unknown field %q", k)
			}
		}
	}
	return nil
}

func checkPackage(p Package) error {
	if !nameRe.MatchString(p.Name) {
		return fmt.Errorf("data package: name %q: use lowercase letters, digits, . _ -", p.Name)
	}
	if len(p.Resources) == 0 {
		return fmt.Errorf("data package: no resources")
	}
	res := map[string]Resource{}
	paths := map[string]bool{}
	for _, r := range p.Resources {
		if !nameRe.MatchString(r.Name) {
			return fmt.Errorf("data package: resource name %q: use lowercase letters, digits, . _ -", r.Name)
		}
		if _, dup := res[r.Name]; dup {
			return fmt.Errorf("data package: resource %q twice", r.Name)
		}
		if err := CheckPath(r.Path); err != nil {
			return fmt.Errorf("data package: resource %q: %w", r.Name, err)
		}
		if paths[r.Path] {
			return fmt.Errorf("data package: path %q used twice", r.Path)
		}
		paths[r.Path] = true
		if err := CheckSchema(r.Schema); err != nil {
			return fmt.Errorf("data package: resource %q: %w", r.Name, err)
		}
		res[r.Name] = r
	}
	for _, r := range p.Resources {
		for _, fk := range r.Schema.ForeignKeys {
			target, ok := res[fk.Reference.Resource]
			if !ok {
				return fmt.Errorf("data package: resource %q: foreign key to unknown resource %q", r.Name, fk.Reference.Resource)
			}
			for _, k := range fk.Reference.Fields {
				if !slices.ContainsFunc(target.Schema.Fields, func(f Field) bool { return f.Name == k }) {
					return fmt.Errorf("data package: resource %q: foreign key to unknown field %s.%s", r.Name, target.Name, k)
				}
			}
		}
	}
	return nil
}

// WriteDataPackage writes datapackage.json for p, checked first (names,
// paths, schemas, foreign keys naming existing resources and fields).
// Output is indented JSON with keys in a fixed order: the same package
// gives the same bytes.
func WriteDataPackage(w io.Writer, p Package) error {
	if err := checkPackage(p); err != nil {
		return err
	}
	// Ordered structs, not maps: encoding/json keeps struct field order,
	// so the bytes are fixed by the code.
	type jLicense struct {
		Name  string `json:"name,omitempty"`
		Path  string `json:"path,omitempty"`
		Title string `json:"title,omitempty"`
	}
	type jContributor struct {
		Title        string   `json:"title"`
		GivenName    string   `json:"givenName,omitempty"`
		FamilyName   string   `json:"familyName,omitempty"`
		Path         string   `json:"path,omitempty"`
		Email        string   `json:"email,omitempty"`
		Organization string   `json:"organization,omitempty"`
		Roles        []string `json:"roles,omitempty"`
	}
	type jConstraints struct {
		Required  bool              `json:"required,omitempty"`
		Unique    bool              `json:"unique,omitempty"`
		Enum      []json.RawMessage `json:"enum,omitempty"`
		Minimum   json.RawMessage   `json:"minimum,omitempty"`
		Maximum   json.RawMessage   `json:"maximum,omitempty"`
		MinLength *int              `json:"minLength,omitempty"`
		MaxLength *int              `json:"maxLength,omitempty"`
		Pattern   string            `json:"pattern,omitempty"`
	}
	type jField struct {
		Name        string        `json:"name"`
		Title       string        `json:"title,omitempty"`
		Description string        `json:"description,omitempty"`
		Type        string        `json:"type"`
		Format      string        `json:"format,omitempty"`
		RDFType     string        `json:"rdfType,omitempty"`
		Constraints *jConstraints `json:"constraints,omitempty"`
	}
	type jReference struct {
		Resource string   `json:"resource"`
		Fields   []string `json:"fields"`
	}
	type jForeignKey struct {
		Fields    []string   `json:"fields"`
		Reference jReference `json:"reference"`
	}
	type jSchema struct {
		Fields        []jField      `json:"fields"`
		PrimaryKey    []string      `json:"primaryKey,omitempty"`
		ForeignKeys   []jForeignKey `json:"foreignKeys,omitempty"`
		MissingValues []string      `json:"missingValues"`
	}
	type jResource struct {
		Name        string  `json:"name"`
		Type        string  `json:"type"`
		Path        string  `json:"path"`
		Title       string  `json:"title,omitempty"`
		Description string  `json:"description,omitempty"`
		Format      string  `json:"format"`
		MediaType   string  `json:"mediatype"`
		Encoding    string  `json:"encoding"`
		Bytes       int64   `json:"bytes"`
		Hash        string  `json:"hash,omitempty"`
		Schema      jSchema `json:"schema"`
	}
	type jPackage struct {
		Schema       string         `json:"$schema"`
		Name         string         `json:"name"`
		ID           string         `json:"id,omitempty"`
		Title        string         `json:"title,omitempty"`
		Description  string         `json:"description,omitempty"`
		Homepage     string         `json:"homepage,omitempty"`
		Version      string         `json:"version,omitempty"`
		Created      string         `json:"created,omitempty"`
		Keywords     []string       `json:"keywords,omitempty"`
		Licenses     []jLicense     `json:"licenses,omitempty"`
		Contributors []jContributor `json:"contributors,omitempty"`
		Resources    []jResource    `json:"resources"`
	}
	out := jPackage{
		Schema: DataPackageProfile, Name: p.Name, ID: p.ID, Title: p.Title, Description: p.Description,
		Homepage: p.Homepage, Version: p.Version, Keywords: p.Keywords,
	}
	if !p.Created.IsZero() {
		out.Created = p.Created.UTC().Format(time.RFC3339)
	}
	for _, l := range p.Licenses {
		if l.SPDX == "" && l.URI == "" {
			return fmt.Errorf("data package: a licence needs an SPDX id or a URI")
		}
		out.Licenses = append(out.Licenses, jLicense{Name: l.SPDX, Path: l.URI, Title: l.Name})
	}
	for _, c := range p.Contributors {
		if c.Title == "" {
			return fmt.Errorf("data package: a contributor has no title")
		}
		out.Contributors = append(out.Contributors, jContributor(c))
	}
	for _, r := range p.Resources {
		s := jSchema{PrimaryKey: r.Schema.PrimaryKey, MissingValues: r.Schema.MissingValues}
		if s.MissingValues == nil {
			s.MissingValues = []string{""}
		}
		for _, f := range r.Schema.Fields {
			jf := jField{Name: f.Name, Title: f.Title, Description: f.Description, Type: f.Type, Format: f.Format, RDFType: f.RDFType}
			if c := f.Constraints; c != nil {
				jc := &jConstraints{Required: c.Required, Unique: c.Unique, MinLength: c.MinLength, MaxLength: c.MaxLength, Pattern: c.Pattern}
				for _, e := range c.Enum {
					jc.Enum = append(jc.Enum, constraintJSON(f, e))
				}
				if c.Minimum != "" {
					jc.Minimum = constraintJSON(f, c.Minimum)
				}
				if c.Maximum != "" {
					jc.Maximum = constraintJSON(f, c.Maximum)
				}
				jf.Constraints = jc
			}
			s.Fields = append(s.Fields, jf)
		}
		for _, fk := range r.Schema.ForeignKeys {
			s.ForeignKeys = append(s.ForeignKeys, jForeignKey{Fields: fk.Fields, Reference: jReference(fk.Reference)})
		}
		out.Resources = append(out.Resources, jResource{
			Name: r.Name, Type: "table", Path: r.Path, Title: r.Title, Description: r.Description,
			Format: "csv", MediaType: "text/csv", Encoding: "utf-8", Bytes: r.Bytes, Hash: r.Hash, Schema: s,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("data package: writing datapackage.json: %w", err)
	}
	return nil
}

// constraintJSON writes a constraint value with the JSON type the profiles
// expect: numbers for integer, number and year fields, booleans for
// boolean fields, strings otherwise. The value parsed already (CheckSchema).
func constraintJSON(f Field, v string) json.RawMessage {
	switch f.Type {
	case TypeInteger, TypeNumber, TypeYear, TypeBoolean:
		// Canonical JSON ("+5" and "1." are lexical forms, not JSON).
		x, _ := parseCell(f, v)
		b, _ := json.Marshal(x)
		return b
	}
	b, _ := json.Marshal(v)
	return b
}
