import type { ReactNode } from 'react';
import { Route, Routes } from 'react-router';
import type { Permission } from '../api/types.ts';
import { ActionEditorPage } from '../dashboard/actions/ActionEditorPage.tsx';
import { ActionsPage } from '../dashboard/actions/ActionsPage.tsx';
import { AuditLogPage } from '../dashboard/audit/AuditLogPage.tsx';
import { AccountPage } from '../dashboard/account/AccountPage.tsx';
import { ApiKeysPage } from '../dashboard/api-keys/ApiKeysPage.tsx';
import { ApplicationsPage } from '../dashboard/applications/ApplicationsPage.tsx';
import { GroupsPage } from '../dashboard/groups/GroupsPage.tsx';
import { InvitationsPage } from '../dashboard/invitations/InvitationsPage.tsx';
import { DashboardHome } from '../dashboard/layout/DashboardHome.tsx';
import { DashboardLayout } from '../dashboard/layout/DashboardLayout.tsx';
import { DashboardNotFound } from '../dashboard/layout/DashboardNotFound.tsx';
import { RequirePermission } from '../dashboard/layout/RequirePermission.tsx';
import { OrganizationsPage } from '../dashboard/organizations/OrganizationsPage.tsx';
import { RolesPage } from '../dashboard/roles/RolesPage.tsx';
import { UsersPage } from '../dashboard/users/UsersPage.tsx';
import { DeliveriesPage } from '../dashboard/webhooks/DeliveriesPage.tsx';
import { WebhooksPage } from '../dashboard/webhooks/WebhooksPage.tsx';
import { AcceptInvitationPage } from '../hosted/accept-invitation/AcceptInvitationPage.tsx';
import { LoginCallbackPage } from '../hosted/callback/LoginCallbackPage.tsx';
import { ResetPasswordPage } from '../hosted/reset-password/ResetPasswordPage.tsx';
import { SignInPage } from '../hosted/sign-in/SignInPage.tsx';
import { RequireSession } from '../session/RequireSession.tsx';
import { NotFoundPage } from './NotFoundPage.tsx';

const gated = (permission: Permission, page: ReactNode) => <RequirePermission permission={permission}>{page}</RequirePermission>;

/**
 * Every client route. The server answers each of these paths with the same index.html (src/web-serving),
 * so the list there must match: /login, /login/callback, /reset-password, /accept-invitation, /dashboard/*.
 */
export function AppRoutes() {
  return (
    <Routes>
      <Route path="/login" element={<SignInPage />} />
      <Route path="/login/callback" element={<LoginCallbackPage />} />
      <Route path="/reset-password" element={<ResetPasswordPage />} />
      <Route path="/accept-invitation" element={<AcceptInvitationPage />} />
      <Route
        path="/dashboard"
        element={
          <RequireSession>
            <DashboardLayout />
          </RequireSession>
        }
      >
        <Route index element={<DashboardHome />} />
        <Route path="account" element={<AccountPage />} />
        <Route path="users" element={gated('users:read', <UsersPage />)} />
        <Route path="invitations" element={gated('users:read', <InvitationsPage />)} />
        <Route path="roles" element={gated('roles:read', <RolesPage />)} />
        <Route path="groups" element={gated('groups:read', <GroupsPage />)} />
        <Route path="organizations" element={gated('organizations:read', <OrganizationsPage />)} />
        <Route path="applications" element={gated('applications:read', <ApplicationsPage />)} />
        <Route path="api-keys" element={gated('api_keys:read', <ApiKeysPage />)} />
        <Route path="webhooks" element={gated('webhooks:read', <WebhooksPage />)} />
        <Route path="webhooks/:id" element={gated('webhooks:read', <DeliveriesPage />)} />
        <Route path="actions" element={gated('actions:read', <ActionsPage />)} />
        <Route path="actions/:id" element={gated('actions:read', <ActionEditorPage />)} />
        <Route path="audit" element={gated('audit:read', <AuditLogPage />)} />
        <Route path="*" element={<DashboardNotFound />} />
      </Route>
      <Route path="*" element={<NotFoundPage />} />
    </Routes>
  );
}
