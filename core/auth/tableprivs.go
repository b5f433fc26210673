package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// TablePrivilege is a per-table override of a user's level (a row of
// sys_table_privileges).
type TablePrivilege struct {
	ID        int64     `json:"id" gorm:"primaryKey"`
	UserID    int64     `json:"user_id"`
	TableName string    `json:"table_name"`
	Privilege int       `json:"privilege"`
	Subset    *string   `json:"-"` // JSON text of the filter object or WHERE string
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

var (
	ErrTablePrivilegeNotFound = errs.New(errs.NotFound, "not_found", "no such table privilege")
	ErrInvalidTableName       = errs.New(errs.Invalid, "invalid_table", "not a user table name")
	ErrOverridePrivilege      = errs.New(errs.Invalid, "invalid_privilege", "a table privilege is one of 10, 20, 25, 30, 40")
)

// SubsetJSON returns the stored subset as JSON (null when none).
func (tp *TablePrivilege) SubsetJSON() json.RawMessage {
	if tp.Subset == nil {
		return json.RawMessage("null")
	}
	return json.RawMessage(*tp.Subset)
}

// MarshalJSON writes the subset as the value the admin sent.
func (tp TablePrivilege) MarshalJSON() ([]byte, error) {
	type plain TablePrivilege
	return json.Marshal(struct {
		plain
		Subset json.RawMessage `json:"subset"`
	}{plain(tp), tp.SubsetJSON()})
}

// ValidOverridePrivilege reports whether p may be set per table: never
// beyond admin (CONTRACT §8).
func ValidOverridePrivilege(p int) bool { return p >= Admin && ValidPrivilege(p) }

// EffectiveLevel is the level that counts for table: the override when the
// user has one for it, else the global level.
func EffectiveLevel(ctx context.Context, db *store.DB, actor *Actor, table string) (int, *TablePrivilege, error) {
	if actor.UserID == 0 || table == "" {
		return actor.Privilege, nil, nil
	}
	var tp TablePrivilege
	err := db.Gorm.WithContext(ctx).Where("user_id = ? AND table_name = ?", actor.UserID, table).Take(&tp).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return actor.Privilege, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read table privilege: %w", err)
	}
	return tp.Privilege, &tp, nil
}

// ListTablePrivileges returns a user's overrides ordered by table.
func ListTablePrivileges(ctx context.Context, db *store.DB, userID int64) ([]TablePrivilege, error) {
	out := []TablePrivilege{}
	err := db.Gorm.WithContext(ctx).Where("user_id = ?", userID).Order("table_name").Find(&out).Error
	return out, err
}

// SaveTablePrivilege upserts the override of (user, table).
func SaveTablePrivilege(ctx context.Context, db *store.DB, tp *TablePrivilege, now time.Time) error {
	tp.TableName = strings.TrimSpace(tp.TableName)
	if !store.ValidIdent(tp.TableName) || strings.HasPrefix(tp.TableName, store.SystemTablePrefix) {
		return ErrInvalidTableName
	}
	if !ValidOverridePrivilege(tp.Privilege) {
		return ErrOverridePrivilege
	}
	tp.CreatedAt, tp.UpdatedAt = now, now
	return db.Tx(ctx, func(tx *store.DB) error {
		err := tx.Gorm.WithContext(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "user_id"}, {Name: "table_name"}},
			DoUpdates: clause.AssignmentColumns([]string{"privilege", "subset", "updated_at"}),
		}).Create(tp).Error
		if err != nil {
			return fmt.Errorf("save table privilege: %w", err)
		}
		// The upsert may have updated an existing row: read back its id.
		if err := tx.Gorm.WithContext(ctx).Where("user_id = ? AND table_name = ?", tp.UserID, tp.TableName).Take(tp).Error; err != nil {
			return err
		}
		return privilegeChanged(ctx, tx, tp.UserID)
	})
}

// DeleteTablePrivilege removes an override; it returns the removed row.
func DeleteTablePrivilege(ctx context.Context, db *store.DB, id int64) (*TablePrivilege, error) {
	var tp TablePrivilege
	err := db.Gorm.WithContext(ctx).Where("id = ?", id).Take(&tp).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrTablePrivilegeNotFound
	}
	if err != nil {
		return nil, err
	}
	return &tp, db.Tx(ctx, func(tx *store.DB) error {
		if err := tx.Gorm.WithContext(ctx).Delete(&tp).Error; err != nil {
			return err
		}
		return privilegeChanged(ctx, tx, tp.UserID)
	})
}
