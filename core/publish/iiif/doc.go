// Package iiif writes the IIIF part of an open-data publication (issue 34): images as static
// IIIF Image API 3.0 level 0 services (an info.json plus every tile and size a client may ask
// for, as plain files, so no image server is needed), and one IIIF Presentation API 3.0
// manifest per record that paints those images on canvases.
//
// The package is pure: it knows nothing of Strata's database or tables. The caller streams a
// publication (an RO-Crate zip) and hands this package a Sink that creates one file at a time
// by slash path relative to the crate root; WriteImage decodes one source image and writes
// its service under a directory, and WriteManifest encodes a manifest to any io.Writer.
//
// Output is deterministic: the same source bytes and options give byte-identical files
// (Go's JPEG encoder is deterministic, the resampling is fixed, JSON keys are in a fixed
// order and language maps are sorted). Nothing reads the clock.
//
// Memory is bounded: the image's declared dimensions are read with DecodeConfig and images
// above ImageOptions.MaxPixels are refused before any pixel is decoded (decompression bombs).
// While publishing, the package holds the decoded source until it is copied into the
// (possibly downscaled) working image (plus one rotated copy when a JPEG's EXIF orientation
// asks for it), then only the current pyramid level, the next smaller one while it is
// computed, and the JPEG encoder's state for one file. Tiles are sub-images, never copies.
package iiif
