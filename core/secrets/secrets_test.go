package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustKey(t *testing.T) []byte {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k1, k2 := mustKey(t), mustKey(t)
	old, _ := New(k1)
	sealed, err := old.Seal("s3cret", "dig/oauth.idp_a.client_secret")
	if err != nil {
		t.Fatal(err)
	}
	if !IsSealed(sealed) || strings.Contains(sealed, "s3cret") || SealedWith(sealed) != KeyID(k1) {
		t.Fatalf("sealed %q", sealed)
	}
	if again, _ := old.Seal("s3cret", "dig/x"); again == sealed {
		t.Error("two seals of one value must differ (random nonce)")
	}
	if got, err := old.Open(sealed, "dig/oauth.idp_a.client_secret"); err != nil || got != "s3cret" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := old.Open(sealed, "other/oauth.idp_a.client_secret"); !errors.Is(err, ErrTampered) {
		t.Errorf("opened in another place: %v", err)
	}
	if got, err := old.Open("legacy clear value", "dig/x"); err != nil || got != "legacy clear value" {
		t.Errorf("a clear value opens as itself: %q %v", got, err)
	}
	rotated, _ := New(k2, k1)
	if got, err := rotated.Open(sealed, "dig/oauth.idp_a.client_secret"); err != nil || got != "s3cret" {
		t.Errorf("an old key still opens: %q %v", got, err)
	}
	resealed, _ := rotated.Seal("s3cret", "p")
	if SealedWith(resealed) != KeyID(k2) || rotated.CurrentID() != KeyID(k2) {
		t.Error("the first key seals")
	}
	onlyNew, _ := New(k2)
	if _, err := onlyNew.Open(sealed, "dig/oauth.idp_a.client_secret"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a dropped key: %v", err)
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := old.Open(tampered, "dig/oauth.idp_a.client_secret"); err == nil {
		t.Error("a tampered value opened")
	}
	if _, err := old.Open("enc:v1:nonsense", "p"); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed: %v", err)
	}
}

func TestLoadFromEnvAndFile(t *testing.T) {
	k1, k2 := mustKey(t), mustKey(t)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvKey {
				return v
			}
			return ""
		}
	}
	kr, src, err := Load("", env(EncodeKey(k1)+", "+EncodeKey(k2)))
	if err != nil || !src.Env || kr.CurrentID() != KeyID(k1) || len(kr.IDs()) != 2 {
		t.Fatalf("env: %v %+v", err, src)
	}
	if _, _, err := Load("", env("short")); err == nil {
		t.Error("a bad key is refused")
	}

	dir := filepath.Join(t.TempDir(), "data")
	kr, src, err = Load(dir, env(""))
	if err != nil || !src.Made {
		t.Fatalf("first start: %v %+v", err, src)
	}
	st, err := os.Stat(KeyFilePath(dir))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", st.Mode(), err)
	}
	if dst, _ := os.Stat(dir); dst.Mode().Perm() != 0o700 {
		t.Errorf("data folder mode %v", dst.Mode())
	}
	again, src, err := Load(dir, env(""))
	if err != nil || src.Made || again.CurrentID() != kr.CurrentID() {
		t.Fatalf("second start reads the same key: %v %+v", err, src)
	}
	if err := os.Chmod(KeyFilePath(dir), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir, env("")); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a readable key file: %v", err)
	}
}
