/** The code a blank action starts with: the handler the sandbox calls, doing nothing yet. */
export const BLANK_ACTION_CODE = `/**
 * @param {PostLoginEvent} event  who is signing in
 * @param {PostLoginApi} api      what the action may do
 */
exports.onExecutePostLogin = async (event, api) => {
  // api.idToken.setCustomClaim('https://example.com/plan', 'pro');
};
`;

/** What the test panel starts with: every field is optional; what is left out comes from a sample user. */
export const SAMPLE_EVENT = `{
  "user": {
    "email": "ada@example.com",
    "roles": ["admin"],
    "mfa_enabled": true
  },
  "request": { "ip": "203.0.113.7" }
}
`;
