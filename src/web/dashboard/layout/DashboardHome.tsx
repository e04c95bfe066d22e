import { Navigate } from 'react-router';
import { useCan } from '../../session/CurrentUser.tsx';

/** /dashboard: administrators land on their users, everyone else on their own account. */
export function DashboardHome() {
  const can = useCan();
  return <Navigate to={can('users:read') ? '/dashboard/users' : '/dashboard/account'} replace />;
}
