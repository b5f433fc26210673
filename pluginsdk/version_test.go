package pluginsdk_test

import (
	"os"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
)

// Every version of the SDK has its entry in CHANGELOG.md, so a bump of
// Version without one fails here.
func TestVersionHasChangelogEntry(t *testing.T) {
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n## v"+pluginsdk.Version+"\n") {
		t.Errorf("CHANGELOG.md has no section ## v%s", pluginsdk.Version)
	}
}
