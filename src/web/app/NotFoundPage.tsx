import { Link } from 'react-router';
import { HostedLayout } from '../hosted/layout/HostedLayout.tsx';

export function NotFoundPage() {
  return (
    <HostedLayout title="Page not found">
      <p>There is nothing at this address.</p>
      <p>
        <Link to="/dashboard">Go to the dashboard</Link>
      </p>
    </HostedLayout>
  );
}
