package auth

import "github.com/strata-archaeo/strata/core/errs"

// Errors of authentication and authorisation (codes of SPEC §7, CONTRACT §1).
var (
	ErrEmailPasswordNeeded = errs.New(errs.Invalid, "email_password_needed", "email and password are required")
	ErrLoginDataNotValid   = errs.New(errs.Unauthenticated, "login_data_not_valid", "wrong email or password")
	ErrAccountLocked       = errs.New(errs.Locked, "account_locked", "too many failed logins: the account is locked for a while")
	ErrUnauthenticated     = errs.New(errs.Unauthenticated, "unauthenticated", "a valid credential is required")
	ErrTokenInvalidated    = errs.New(errs.Unauthenticated, "token_invalidated", "this token was invalidated: sign in again")
	ErrAppMismatch         = errs.New(errs.Forbidden, "app_mismatch", "this credential belongs to another application")
	ErrNotEnoughPrivilege  = errs.New(errs.Forbidden, "not_enough_privilege", "your privilege is too low for this operation")
	ErrAccountPending      = errs.New(errs.Forbidden, "not_enough_privilege", "this account is awaiting approval")
)
