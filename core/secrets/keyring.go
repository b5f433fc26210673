package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of an instance key (AES-256).
const KeySize = 32

const prefix = "enc:v1:"

// Errors of Open.
var (
	ErrUnknownKey = errors.New("sealed with a key the keyring does not hold")
	ErrMalformed  = errors.New("malformed sealed value")
	ErrTampered   = errors.New("sealed value does not open: wrong key, wrong place or tampered")
)

// Keyring holds the current key, which seals, and older keys, which only
// open. It is safe for concurrent use (it never changes after New).
type Keyring struct {
	current string
	aeads   map[string]cipher.AEAD
	order   []string
}

// KeyID names a key without revealing it: the first 8 bytes of a SHA-256
// over a fixed label and the key, in hex.
func KeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("strata secret key id\x00"), key...))
	return hex.EncodeToString(sum[:8])
}

// GenerateKey returns a new random key.
func GenerateKey() ([]byte, error) {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("generate secret key: %w", err)
	}
	return k, nil
}

// EncodeKey is the text form of a key (base64url, no padding).
func EncodeKey(key []byte) string { return base64.RawURLEncoding.EncodeToString(key) }

// DecodeKey reads a key in base64 (standard or URL alphabet, padded or
// not) of exactly KeySize bytes.
func DecodeKey(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != KeySize {
				return nil, fmt.Errorf("secret key has %d bytes, want %d", len(k), KeySize)
			}
			return k, nil
		}
	}
	return nil, errors.New("secret key is not base64")
}

// New returns a keyring whose first key is current. Duplicates are kept
// once.
func New(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("a keyring needs at least one key")
	}
	kr := &Keyring{aeads: map[string]cipher.AEAD{}}
	for _, k := range keys {
		if len(k) != KeySize {
			return nil, fmt.Errorf("secret key has %d bytes, want %d", len(k), KeySize)
		}
		id := KeyID(k)
		if _, dup := kr.aeads[id]; dup {
			continue
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		kr.aeads[id] = gcm
		kr.order = append(kr.order, id)
	}
	kr.current = kr.order[0]
	return kr, nil
}

// CurrentID is the id of the key that seals.
func (k *Keyring) CurrentID() string { return k.current }

// IDs are the ids of the keys held, the current one first.
func (k *Keyring) IDs() []string { return append([]string(nil), k.order...) }

// IsSealed reports whether stored is a sealed value (as opposed to a clear
// value written before encryption).
func IsSealed(stored string) bool { return strings.HasPrefix(stored, prefix) }

// SealedWith returns the key id of a sealed value ("" for a clear one).
func SealedWith(stored string) string {
	if !IsSealed(stored) {
		return ""
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(stored, prefix), ":")
	return id
}

// Seal encrypts plain with the current key, bound to place (e.g. the app
// and setting it is stored under).
func (k *Keyring) Seal(plain, place string) (string, error) {
	gcm := k.aeads[k.current]
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := gcm.Seal(nonce, nonce, []byte(plain), []byte(place))
	return prefix + k.current + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open returns the clear text of stored, which was sealed for place. A
// value without the sealed prefix is returned as it is (written in clear
// before encryption existed).
func (k *Keyring) Open(stored, place string) (string, error) {
	if !IsSealed(stored) {
		return stored, nil
	}
	id, body, ok := strings.Cut(strings.TrimPrefix(stored, prefix), ":")
	if !ok {
		return "", ErrMalformed
	}
	gcm, held := k.aeads[id]
	if !held {
		return "", fmt.Errorf("key %s: %w", id, ErrUnknownKey)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < gcm.NonceSize()+gcm.Overhead() {
		return "", ErrMalformed
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(place))
	if err != nil {
		return "", ErrTampered
	}
	return string(plain), nil
}
