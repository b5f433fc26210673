package imports

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// benchCSV is a CSV of about 32 MB (the size that took a preview to
// 1.36 GB when every row was kept).
var benchCSV = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	b.WriteString("code;label;site;weight;notes\n")
	for i := 0; b.Len() < 32<<20; i++ {
		fmt.Fprintf(&b, "IMP%07d;\"Find %d, sherd\";Pompeii;%d.5;found in the north trench near the wall\n", i, i, i%900)
	}
	return b.Bytes()
})

// benchXLSX is a workbook of 200,000 rows of five cells (about 9 MB),
// written with excelize's stream writer.
var benchXLSX = sync.OnceValue(func() []byte {
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		panic(err)
	}
	_ = sw.SetRow("A1", []any{"code", "label", "site", "weight", "notes"})
	for i := range 200_000 {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, []any{fmt.Sprintf("IMP%07d", i), fmt.Sprintf("Find %d, sherd", i), "Pompeii", float64(i%900) + 0.5,
			"found in the north trench near the wall"}); err != nil {
			panic(err)
		}
	}
	if err := sw.Flush(); err != nil {
		panic(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		panic(err)
	}
	return buf.Bytes()
})

// peakHeap samples the live heap (runtime/metrics) while fn runs and
// returns its highest value above the heap before fn, in bytes: the
// memory a request holds at once, which the B/op of ReportAllocs (all
// that was ever allocated) does not show.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base, peak := read(), uint64(0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// BenchmarkPreview measures a preview (the first 20 rows kept, every row
// read and counted) against Parse (every row kept, as the preview did and
// the import still does): time, allocations and, as peak-heap-MB, the
// most heap held at once.
//
//	go test -run '^$' -bench BenchmarkPreview -benchtime 3x ./core/imports/
func BenchmarkPreview(b *testing.B) {
	for _, file := range []struct {
		name string
		data func() []byte
	}{{"csv-32MB", benchCSV}, {"xlsx-200k-rows", benchXLSX}} {
		for _, mode := range []struct {
			name string
			run  func(data []byte) (int, error)
		}{
			{"preview", func(data []byte) (int, error) { _, n, err := Preview(data, PreviewRows); return n, err }},
			{"parse-all", func(data []byte) (int, error) { t, err := Parse(data); return len(t.Rows), err }},
		} {
			b.Run(file.name+"/"+mode.name, func(b *testing.B) {
				data := file.data()
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					var err error
					p := peakHeap(func() { _, err = mode.run(data) })
					if err != nil {
						b.Fatal(err)
					}
					peak = max(peak, p)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			})
		}
	}
}
