package plugintest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// sealedPrefix marks the fake's sealed values. The server's differ (its
// keyring's format); a plugin must treat sealed text as opaque.
const sealedPrefix = "fake-sealed:v1:"

// sealPlace binds a sealed value to the plugin, app and purpose, as the
// server does, so a value copied elsewhere does not open.
func (h *FakeHost) sealPlace(app, purpose string) string {
	name := ""
	if h.manifest != nil {
		name = h.manifest.Name
	}
	return "plugin\x00" + name + "\x00" + app + "\x00" + purpose
}

// aead is the fake's instance key, made on first use (AES-256-GCM as the
// server's keyring).
func (h *FakeHost) aead() (cipher.AEAD, error) {
	if h.gcm != nil {
		return h.gcm, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if h.gcm, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	return h.gcm, nil
}

// Seal implements the Host service with a key of the fake's own.
func (h *FakeHost) Seal(_ context.Context, req *pluginv1.SealRequest) (*pluginv1.SealResponse, error) {
	if req.GetApp() == "" || req.GetPurpose() == "" {
		return nil, status.Error(codes.InvalidArgument, "seal: app and purpose are required")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	gcm, err := h.aead()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	out := gcm.Seal(nonce, nonce, []byte(req.GetClear()), []byte(h.sealPlace(req.GetApp(), req.GetPurpose())))
	return &pluginv1.SealResponse{Sealed: sealedPrefix + base64.RawURLEncoding.EncodeToString(out)}, nil
}

// Open implements the Host service: only values this fake sealed for the
// same plugin, app and purpose open.
func (h *FakeHost) Open(_ context.Context, req *pluginv1.OpenRequest) (*pluginv1.OpenResponse, error) {
	refused := status.Error(codes.InvalidArgument, "secret_invalid: the value was not sealed by this server for this plugin, app and purpose")
	body, ok := strings.CutPrefix(req.GetSealed(), sealedPrefix)
	if !ok {
		return nil, refused
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	h.mu.Lock()
	defer h.mu.Unlock()
	gcm, gerr := h.aead()
	if gerr != nil {
		return nil, status.Error(codes.Internal, gerr.Error())
	}
	if err != nil || len(raw) < gcm.NonceSize()+gcm.Overhead() {
		return nil, refused
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(h.sealPlace(req.GetApp(), req.GetPurpose())))
	if err != nil {
		return nil, refused
	}
	return &pluginv1.OpenResponse{Clear: string(plain)}, nil
}
