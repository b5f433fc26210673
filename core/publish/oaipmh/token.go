package oaipmh

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// maxToken bounds a resumption token's length, both read and written.
const maxToken = 2048

// defaultTokenKey is used without Options.TokenKey: it still catches a
// damaged or hand-edited token, though anyone reading this source can forge
// one (which only lets them ask for public data from another position).
var defaultTokenKey = []byte("strata oai-pmh resumption token v1")

// token is the state a resumption token carries: the whole query, so the
// handler keeps nothing between requests.
type token struct {
	Verb   string `json:"v"`           // ListRecords or ListIdentifiers
	Prefix string `json:"m"`           // metadataPrefix
	Set    string `json:"s,omitempty"` // set spec
	From   string `json:"f,omitempty"` // from, as the harvester sent it
	Until  string `json:"u,omitempty"` // until, as the harvester sent it
	After  string `json:"a"`           // the Repository's position
	Cursor int    `json:"c"`           // items returned before the next page
}

var errBadToken = errors.New("bad resumption token")

// encodeToken returns base64url(json) "." base64url(hmac).
func encodeToken(key []byte, t token) (string, error) {
	body, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	s := base64.RawURLEncoding.EncodeToString(body) + "." +
		base64.RawURLEncoding.EncodeToString(sign(key, body))
	if len(s) > maxToken {
		return "", errors.New("resumption token too long (the repository's position is too long)")
	}
	return s, nil
}

// decodeToken checks the signature and decodes the token.
func decodeToken(key []byte, s string) (token, error) {
	var t token
	if len(s) > maxToken {
		return t, errBadToken
	}
	b64, sig64, ok := strings.Cut(s, ".")
	if !ok {
		return t, errBadToken
	}
	body, err1 := base64.RawURLEncoding.DecodeString(b64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sig64)
	if err1 != nil || err2 != nil || !hmac.Equal(sig, sign(key, body)) {
		return t, errBadToken
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil || dec.More() {
		return t, errBadToken
	}
	if t.Cursor < 0 || (t.Verb != "ListRecords" && t.Verb != "ListIdentifiers") {
		return t, errBadToken
	}
	return t, nil
}

func sign(key, body []byte) []byte {
	if len(key) == 0 {
		key = defaultTokenKey
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(nil)
}
