package filter

import (
	"fmt"

	"github.com/strata-archaeo/strata/core/errs"
)

// Errors of the filter language. Each failure carries "detail" (what was
// wrong, in words) and, for names, "field".
var (
	ErrInvalidFilter = errs.New(errs.Invalid, "invalid_filter", "the filter is malformed")
	ErrInvalidField  = errs.New(errs.Invalid, "invalid_field", "the filter names an unknown field")
	ErrInvalidSubset = errs.New(errs.Invalid, "invalid_subset", "the row subset is not valid")
)

func invalidf(format string, args ...any) *errs.Error {
	return ErrInvalidFilter.With("detail", fmt.Sprintf(format, args...))
}

func unknownField(table, name string) *errs.Error {
	return ErrInvalidField.With("field", name).With("detail", fmt.Sprintf("%s has no field %q", table, name))
}

func subsetf(format string, args ...any) *errs.Error {
	return ErrInvalidSubset.With("detail", fmt.Sprintf(format, args...))
}
