import { unimplemented } from "../common/errors.js";
import type {
  AddRulesRequest,
  AddRulesResponse,
  ExplainRequest,
  ExplainResponse,
  ListRulesRequest,
  ListRulesResponse,
  RemoveRuleRequest,
  RemoveRuleResponse,
  SetModeRequest,
  SetModeResponse,
} from "../generated/parkway/v1/permission.js";
import type { UnaryHandler } from "./adapters.js";

/** The handlers of parkway.v1.PermissionService. */
export interface PermissionServiceHandlers {
  listRules: UnaryHandler<ListRulesRequest, ListRulesResponse>;
  addRules: UnaryHandler<AddRulesRequest, AddRulesResponse>;
  removeRule: UnaryHandler<RemoveRuleRequest, RemoveRuleResponse>;
  setMode: UnaryHandler<SetModeRequest, SetModeResponse>;
  explain: UnaryHandler<ExplainRequest, ExplainResponse>;
}

/** PermissionService handlers for features that are not built: each answers UNIMPLEMENTED naming it. */
export function unimplementedPermissionService(): PermissionServiceHandlers {
  const missing = (feature: string) => () => Promise.reject(unimplemented(feature));
  return {
    listRules: missing("PermissionService.ListRules (permission rules)"),
    addRules: missing("PermissionService.AddRules (permission rules)"),
    removeRule: missing("PermissionService.RemoveRule (permission rules)"),
    setMode: missing("PermissionService.SetMode (permission modes)"),
    explain: missing("PermissionService.Explain (the permission engine)"),
  };
}
