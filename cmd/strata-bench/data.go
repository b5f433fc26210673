package main

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
)

// row is one generated find.
type row struct {
	Title    string  `json:"title"`
	Material string  `json:"material"`
	Weight   float64 `json:"weight"`
	Context  string  `json:"context"`
}

// The vocabularies rows are drawn from, uniformly. The equality list asks
// for one of 40 materials (2.5% of the rows each); the substring list for
// "amphor", which the titles hold in one of 25 nouns (4% of the rows), in
// another case than the one stored.
var (
	materials = []string{
		"bronze", "iron", "copper", "lead", "silver", "gold", "tin", "glass", "faience", "amber",
		"bone", "antler", "ivory", "shell", "wood", "charcoal", "leather", "textile", "flint", "chert",
		"obsidian", "basalt", "granite", "limestone", "marble", "sandstone", "slate", "jet", "coral", "clay",
		"terracotta", "coarse ware", "fine ware", "sigillata", "impasto", "bucchero", "mortar", "plaster", "slag", "pumice",
	}
	adjectives = []string{
		"Broken", "Complete", "Burnt", "Decorated", "Plain", "Small", "Large", "Worn", "Polished", "Incised",
		"Painted", "Fragmentary", "Restored", "Corroded", "Gilded", "Stamped", "Moulded", "Carved", "Cracked", "Intact",
	}
	nouns = []string{
		"Amphora", "Bowl", "Jug", "Lamp", "Coin", "Fibula", "Pin", "Needle", "Bead", "Ring",
		"Nail", "Blade", "Arrowhead", "Spindle whorl", "Loom weight", "Tile", "Brick", "Figurine", "Vessel", "Cup",
		"Plate", "Handle", "Rim sherd", "Base sherd", "Button",
	}
)

const substrTerm = "amphor"

// generator makes deterministic rows: the seeded rows depend only on the
// seed and their position, so every target gets the same data. Records made
// by the create operation are numbered from 1,000,000,000 on.
type generator struct {
	seed    uint64
	created atomic.Int64
}

func newGenerator(seed uint64) *generator { return &generator{seed: seed} }

// seedRand is the random source of the rows from position from on.
func (g *generator) seedRand(from int) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed, uint64(from)))
}

// newRow is a row for the create operation.
func (g *generator) newRow(r *rand.Rand) row { return g.row(r, 1_000_000_000+g.created.Add(1)) }

func (g *generator) row(r *rand.Rand, num int64) row {
	return row{
		Title:    fmt.Sprintf("%s %s %d", adjectives[r.IntN(len(adjectives))], nouns[r.IntN(len(nouns))], num),
		Material: materials[r.IntN(len(materials))],
		Weight:   float64(r.IntN(1_000_000)) / 100,
		Context:  fmt.Sprintf("US %d", 1000+r.IntN(900)),
	}
}

func randomMaterial(r *rand.Rand) string { return materials[r.IntN(len(materials))] }

func randomWeight(r *rand.Rand) float64 { return float64(r.IntN(1_000_000)) / 100 }
