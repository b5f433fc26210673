package schema

// OptionsSource says where a select field takes its values (CONTRACT §8):
// a vocabulary, another table's field, or the records of a table (lookup).
type OptionsSource struct {
	Type string `json:"type"`          // vocabulary, db or id_from_tb
	Set  string `json:"set,omitempty"` // vocabulary
	Ref  string `json:"ref,omitempty"` // db: "tb:field"; id_from_tb: "tb"
}

// OptionsSource returns the value source of a select field, or nil.
func (f *Field) OptionsSource() *OptionsSource {
	if !f.Type.IsSelect() {
		return nil
	}
	switch {
	case f.IDFromTb != "":
		return &OptionsSource{Type: "id_from_tb", Ref: f.IDFromTb}
	case f.GetValuesFromTb != "":
		return &OptionsSource{Type: "db", Ref: f.GetValuesFromTb}
	case f.VocabularySet != "":
		return &OptionsSource{Type: "vocabulary", Set: f.VocabularySet}
	}
	return nil
}
