import { Outlet } from 'react-router';
import { AccountMenu } from './AccountMenu.tsx';
import { SideNav } from './SideNav.tsx';

/** Header, navigation and the current screen; a skip link lets keyboard users jump past the navigation. */
export function DashboardLayout() {
  return (
    <div className="dashboard">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <p className="brand">
          <img src="/dashboard/favicon.svg" alt="" width="24" height="24" /> Identity
        </p>
        <AccountMenu />
      </header>
      <div className="dashboard-body">
        <SideNav />
        <main id="content" className="content" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}
