// Package bones is the domain logic of the osteology inventory plugin
// (plugins/osteology): the catalogue of skeletal elements served by GET
// /osteology/schema, validation and normalisation of the osteo_data JSON
// on save, and the per-individual, per-region summary of GET
// /osteology/summary. It imports only the standard library.
//
// Where the rules come from: issue 5 ("Osteology") for the document shape,
// the conservation and certainty vocabularies and the error behaviour
// (400 validation_failed naming the path); SPEC.md §2.8 for English ids
// with _right/_left sides and the regions head, spine, thorax, shoulder,
// upper_limb, pelvis, lower_limb, foot plus teeth; CONTRACT.md §8 for
// "per bone only present is required".
//
// The catalogue: one element per bone or conventional group of bones
// (vertebrae by segment, ribs, carpals, metacarpals, hand and foot
// phalanges, the tarsals other than talus and calcaneus), sided where
// anatomy has two; the cranium may be recorded whole or by bone; teeth
// use FDI two-digit codes, tooth_11…tooth_48 permanent and tooth_51…
// tooth_85 deciduous. Labels are English and Italian anatomical names.
// Ids are a stored format: never rename one, only add. BraDypUS's client
// records with its own ids (cervical_vertebrae, ilium_left, tarsals_right,
// …): they are elements too, stored as sent, linked by same_as or part_of
// to ours.
package bones
