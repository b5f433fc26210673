package fieldsync

import "github.com/strata-archaeo/strata/core/api"

func (h *handlers) uploadRoutes() []api.Route { return nil }
